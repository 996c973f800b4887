package apiserver

import (
	"crdplay/engine/internal/conversion"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// WebhookFunc carries a ConversionReview to a webhook; see conversion.WebhookFunc.
type WebhookFunc = conversion.WebhookFunc

func newConverter(crd *apiextensionsv1.CustomResourceDefinition, call WebhookFunc) (runtime.ObjectConvertor, runtime.ObjectConvertor, error) {
	return conversion.NewConverter(crd, call)
}

// TEMPORARY until engine/internal/openapi lands.
func typeConverterFor(crd *apiextensionsv1.CustomResourceDefinition) (managedfields.TypeConverter, error) {
	return managedfields.NewDeducedTypeConverter(), nil
}

// TEMPORARY until crds provides them.
func crdTypeConverter() (managedfields.TypeConverter, error) {
	return managedfields.NewDeducedTypeConverter(), nil
}

const cleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

func prepareCRDForDelete(crd *apiextensionsv1.CustomResourceDefinition, now metav1.Time) {
	if crd.DeletionTimestamp == nil {
		crd.DeletionTimestamp = &now
		zero := int64(0)
		crd.DeletionGracePeriodSeconds = &zero
	}
	has := false
	for _, f := range crd.Finalizers {
		has = has || f == cleanupFinalizer
	}
	if !has {
		crd.Finalizers = append(crd.Finalizers, cleanupFinalizer)
	}
}

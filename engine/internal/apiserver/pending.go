package apiserver

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WebhookFunc carries a ConversionReview to a webhook.
type WebhookFunc func(ctx context.Context, cfg apiextensionsv1.WebhookClientConfig, review []byte) ([]byte, error)

// TEMPORARY until engine/internal/conversion lands.
func newConverter(crd *apiextensionsv1.CustomResourceDefinition, call WebhookFunc) (runtime.ObjectConvertor, runtime.ObjectConvertor, error) {
	c := nopConv{}
	return c, c, nil
}

type nopConv struct{}

func (nopConv) Convert(in, out, context interface{}) error {
	ui, ok1 := in.(*unstructured.Unstructured)
	uo, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("unsupported")
	}
	gv := uo.GroupVersionKind().GroupVersion()
	c := ui.DeepCopy()
	c.SetAPIVersion(gv.String())
	uo.Object = c.Object
	return nil
}
func (nopConv) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u := in.(*unstructured.Unstructured).DeepCopy()
	k, _ := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	u.SetAPIVersion(k.GroupVersion().String())
	return u, nil
}
func (nopConv) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
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

package apiserver

import (
	"crdplay/engine/internal/openapi"

	"crdplay/engine/internal/conversion"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// WebhookFunc carries a ConversionReview to a webhook; see conversion.WebhookFunc.
type WebhookFunc = conversion.WebhookFunc

func newConverter(crd *apiextensionsv1.CustomResourceDefinition, call WebhookFunc) (runtime.ObjectConvertor, runtime.ObjectConvertor, error) {
	return conversion.NewConverter(crd, call)
}

func typeConverterFor(crd *apiextensionsv1.CustomResourceDefinition) (managedfields.TypeConverter, error) {
	return openapi.TypeConverter(crd)
}

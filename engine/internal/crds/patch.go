package crds

import (
	"fmt"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
)

// StrategicMergePatch applies a strategic merge patch (application/strategic-merge-patch+json) to a stored
// CRD, as kube-apiserver's PATCH handler does for the built-in types it serves (AS/endpoints/handlers/patch.go:
// smpPatcher.applyPatchToCurrentObject, strategicPatchObject and applyPatchToObject, which are unexported).
// The patch meta comes from the apiextensions/v1 Go types, whose lists carry no patch strategy: a list in
// the patch (spec.versions, a version's additionalPrinterColumns) replaces the stored one, maps (schema
// properties, labels, annotations) merge key by key, and metadata's lists (finalizers, ownerReferences)
// merge as ObjectMeta's tags say.
//
// directive is the fieldValidation query value ("" means Warn, as upstream's handlers default it): with
// Warn, duplicate and unknown fields come back as warnings; with Strict they fail with the 422 upstream
// gives; Ignore drops them silently. The result is defaulted; the caller runs the update strategy. Errors are
// *apierrors.StatusError with upstream's messages.
func StrategicMergePatch(live *apiextensionsv1.CustomResourceDefinition, patch []byte, directive string) (*apiextensionsv1.CustomResourceDefinition, []string, error) {
	if directive == "" {
		directive = metav1.FieldValidationWarn
	}
	strict := directive == metav1.FieldValidationWarn || directive == metav1.FieldValidationStrict
	current := live.DeepCopy()
	current.APIVersion, current.Kind = crdGVK.ToAPIVersionAndKind()
	original, err := runtime.DefaultUnstructuredConverter.ToUnstructured(current)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}

	patchMap := map[string]interface{}{}
	var strictErrs []error
	if strict {
		if strictErrs, err = kjson.UnmarshalStrict(patch, &patchMap); err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
	} else if err := kjson.UnmarshalCaseSensitivePreserveInts(patch, &patchMap); err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}

	patched, err := strategicpatch.StrategicMergeMapPatch(original, patchMap, &apiextensionsv1.CustomResourceDefinition{})
	if err != nil {
		return nil, nil, interpretStrategicMergePatchError(err)
	}

	out := &apiextensionsv1.CustomResourceDefinition{}
	invalid := func(msg string) error {
		return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), fmt.Sprintf("%+v", patchMap), msg)})
	}
	warnings, err := settleStrictErrors(runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patched, out, strict), strictErrs, directive, invalid)
	if err != nil {
		return nil, nil, err
	}
	// Decoding JSON into a versioned object would default it; upstream does the same after the map patch.
	scheme.Default(out)
	out.APIVersion, out.Kind = crdGVK.ToAPIVersionAndKind()
	return out, warnings, nil
}

// settleStrictErrors decides, as upstream's patchers do, what becomes of decodeErr (decoding the patched
// object) and strictErrs (what strict decoding of the patch itself found): a decoding error that is not a
// strict one is a 422 through invalid, and wins over strictErrs, which are incomplete then; strict errors are
// warnings with the Warn directive and a 422 otherwise (callers pass no strict errors for Ignore).
func settleStrictErrors(decodeErr error, strictErrs []error, directive string, invalid func(string) error) ([]string, error) {
	if decodeErr != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(decodeErr)
		if !isStrict {
			return nil, invalid(decodeErr.Error())
		}
		strictErrs = append(strictErrs, strictErr.Errors()...)
	}
	if len(strictErrs) == 0 {
		return nil, nil
	}
	if directive != metav1.FieldValidationWarn {
		return nil, invalid(runtime.NewStrictDecodingError(strictErrs).Error())
	}
	var warnings []string
	for _, e := range strictErrs {
		warnings = append(warnings, splitYAMLErrors(e.Error())...)
	}
	return warnings, nil
}

// interpretStrategicMergePatchError gives a patch error the status upstream's handler gives it.
func interpretStrategicMergePatchError(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys, mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	default:
		return err
	}
}

// DecodePatched decodes the JSON a JSON or merge patch produced from a stored CRD, as the PATCH handler's
// jsonPatcher.applyPatchToCurrentObject does: strictErrs are what strict decoding of the patch itself found
// (duplicate fields); with the Warn directive they and the unknown fields of the result become warnings,
// with Strict a 422 on "patch" naming the patched JSON, and any other decoding error is such a 422 too.
// The object comes back defaulted.
func DecodePatched(patched []byte, strictErrs []error, directive string) (*apiextensionsv1.CustomResourceDefinition, []string, error) {
	if directive == "" {
		directive = metav1.FieldValidationWarn
	}
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("no JSON serializer"))
	}
	decoder := info.Serializer
	if directive == metav1.FieldValidationWarn || directive == metav1.FieldValidationStrict {
		decoder = info.StrictSerializer
	}
	invalid := func(msg string) error {
		return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(patched), msg)})
	}
	obj, _, decodeErr := decodeInto(decoder, patched, &apiextensionsv1.CustomResourceDefinition{})
	warnings, err := settleStrictErrors(decodeErr, strictErrs, directive, invalid)
	if err != nil {
		return nil, nil, err
	}
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, warnings, apierrors.NewInternalError(fmt.Errorf("decoded %T instead of a v1 CustomResourceDefinition", obj))
	}
	crd.APIVersion, crd.Kind = crdGVK.ToAPIVersionAndKind()
	return crd, warnings, nil
}

// Apply is server-side apply (application/apply-patch+yaml) of a CRD, as the PATCH handler's applyPatcher does
// it: the patch is decoded from YAML into an unstructured object, fm (the endpoint's field manager) merges it
// into live (an empty CRD when the apply creates one) for manager, and with the Strict and Warn directives the
// patch is then decoded strictly, duplicate fields failing (Strict) or becoming warnings (Warn). The result
// carries the managedFields of the apply; the caller runs the create or update strategy.
func Apply(fm *managedfields.FieldManager, live *apiextensionsv1.CustomResourceDefinition, patch []byte, manager string, force bool, directive string) (*apiextensionsv1.CustomResourceDefinition, []string, error) {
	if directive == "" {
		directive = metav1.FieldValidationWarn
	}
	patchObj := &unstructured.Unstructured{Object: map[string]interface{}{}}
	if err := utilyaml.Unmarshal(patch, &patchObj.Object); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	current := live.DeepCopy()
	current.APIVersion, current.Kind = crdGVK.ToAPIVersionAndKind()
	obj, err := fm.Apply(current, patchObj, manager, force)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	if directive == metav1.FieldValidationStrict || directive == metav1.FieldValidationWarn {
		if err := utilyaml.UnmarshalStrict(patch, &map[string]interface{}{}); err != nil {
			if directive == metav1.FieldValidationStrict {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", err))
			}
			warnings = splitYAMLErrors(err.Error())
		}
	}
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("apply returned %T instead of a v1 CustomResourceDefinition", obj))
	}
	crd.APIVersion, crd.Kind = crdGVK.ToAPIVersionAndKind()
	return crd, warnings, nil
}

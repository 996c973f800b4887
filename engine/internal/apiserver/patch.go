package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/registry/rest"
	kjson "sigs.k8s.io/json"
)

// maxJSONPatchOperations is kube-apiserver's cap on the operations of one JSON patch.
const maxJSONPatchOperations = 10000

var patchTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}

type jsonPatchOp struct {
	Op    string      `json:"op"`
	Path  string      `json:"path"`
	From  string      `json:"from"`
	Value interface{} `json:"value"`
}

func (r *crRequest) patch(strategy updateStrategy, fm *managedfields.FieldManager) (reply, error) {
	ctx := r.req.Context()
	ct, _, _ := mime.ParseMediaType(r.req.Header.Get("Content-Type"))
	patchType := types.PatchType(ct)
	switch patchType {
	case types.JSONPatchType, types.MergePatchType, types.ApplyYAMLPatchType:
	default:
		return reply{}, negotiation.NewUnsupportedMediaTypeError(patchTypes)
	}
	body, err := readBody(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	opts := &metav1.PatchOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return reply{}, apierrors.NewBadRequest(err.Error())
	}
	if errs := metav1validation.ValidatePatchOptions(opts, patchType); len(errs) > 0 {
		return reply{}, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	if body, err = validatePatchBytes(body, patchType); err != nil {
		return reply{}, err
	}
	directive := fieldValidation(opts.FieldValidation)
	manager := managerOrUserAgent(opts.FieldManager, r.req.UserAgent())
	dryRun := len(opts.DryRun) > 0

	mutate := func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		var out *unstructured.Unstructured
		var err error
		if patchType == types.ApplyYAMLPatchType {
			out, err = r.applyPatch(ctx, live, body, opts, directive, fm)
		} else {
			out, err = r.jsonPatch(ctx, live, body, patchType, directive, fm, manager)
		}
		if err != nil {
			return nil, err
		}
		if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(r.info.Namespace, out); err != nil {
			return nil, err
		}
		if err := checkName(out, r.info.Name, r.info.Namespace); err != nil {
			return nil, err
		}
		return out, nil
	}
	if patchType == types.ApplyYAMLPatchType {
		if _, err := r.getObject(ctx, r.info.Namespace, r.info.Name); apierrors.IsNotFound(err) {
			if r.terminating {
				return reply{}, errTerminatingCreate(r.gr(), r.info.Name)
			}
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(r.vi.kind)
			obj, err := mutate(live)
			if err != nil {
				return reply{}, err
			}
			rest.WipeObjectMetaSystemFields(obj)
			out, err := r.store(ctxWithNamespace(ctx, r.info.Namespace), obj, dryRun)
			if err != nil {
				return reply{}, err
			}
			return reply{code: http.StatusCreated, obj: out}, nil
		}
	}
	out, _, err := r.guaranteedUpdate(ctx, strategy, dryRun, mutate)
	if err != nil {
		return reply{}, err
	}
	return reply{code: http.StatusOK, obj: out}, nil
}

// validatePatchBytes checks that a patch is JSON at all (YAML for apply patches), as the PATCH handler's
// validateAndTranscodePatch does before anything else; the patch mechanisms report other problems. The body
// is returned as it came: the mechanisms decode it themselves.
func validatePatchBytes(body []byte, pt types.PatchType) ([]byte, error) {
	if pt == types.ApplyYAMLPatchType {
		if _, err := utilyaml.ToJSON(body); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error encoding patch: %v", err))
		}
		return body, nil
	}
	if !json.Valid(body) {
		return nil, apierrors.NewBadRequest("invalid JSON patch")
	}
	return body, nil
}

// upstreamJSONPatchOpType is how encoding/json names upstream's []jsonPatchOp (in package handlers) in its
// errors; ours lives in package apiserver.
const upstreamJSONPatchOpType = "[]handlers.jsonPatchOp"

// applyJSPatch applies a JSON or merge patch to the JSON of the current object, as the PATCH handler's
// jsonPatcher.applyJSPatch does: with the Strict and Warn directives the patch is first decoded strictly, and
// its duplicate fields come back as strict errors for the caller to report with the decoding's.
func applyJSPatch(current, patch []byte, pt types.PatchType, directive string) ([]byte, []error, error) {
	strict := directive == metav1.FieldValidationStrict || directive == metav1.FieldValidationWarn
	var strictErrs []error
	var err error
	switch pt {
	case types.JSONPatchType:
		if strict {
			var ops []jsonPatchOp
			if strictErrs, err = kjson.UnmarshalStrict(patch, &ops); err != nil {
				msg := strings.ReplaceAll(err.Error(), "[]"+reflect.TypeOf(jsonPatchOp{}).String(), upstreamJSONPatchOpType)
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %s", msg))
			}
			for i, e := range strictErrs {
				strictErrs[i] = fmt.Errorf("json patch %v", e)
			}
		}
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		if len(p) > maxJSONPatchOperations {
			return nil, nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(p)))
		}
		patched, err := p.Apply(current)
		if err != nil {
			return nil, nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return patched, strictErrs, nil
	case types.MergePatchType:
		if strict {
			v := map[string]any{}
			if strictErrs, err = kjson.UnmarshalStrict(patch, &v); err != nil {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
		}
		patched, err := jsonpatch.MergePatch(current, patch)
		if err == jsonpatch.ErrBadJSONPatch {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		return patched, strictErrs, err
	}
	return nil, nil, fmt.Errorf("%v: unimplemented patch type", pt)
}

// jsonPatch applies a JSON or merge patch to the live object's JSON in the request version and decodes the
// result as a request body.
func (r *crRequest) jsonPatch(ctx context.Context, live *unstructured.Unstructured, patch []byte, pt types.PatchType, directive string, fm *managedfields.FieldManager, manager string) (*unstructured.Unstructured, error) {
	current, err := json.Marshal(live.Object)
	if err != nil {
		return nil, err
	}
	strict := directive == metav1.FieldValidationStrict || directive == metav1.FieldValidationWarn
	patched, strictErrs, err := applyJSPatch(current, patch, pt, directive)
	if err != nil {
		return nil, err
	}

	dec := r.ci.requestDecoder(false, strict, r.vi.kind.GroupVersion())
	into := &unstructured.Unstructured{}
	into.SetGroupVersionKind(r.vi.kind)
	def := r.vi.kind
	obj, _, err := dec.Decode(patched, &def, into)
	invalid := func(msg string) error {
		return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(patched), msg)})
	}
	if err != nil {
		se, isStrict := runtime.AsStrictDecodingError(err)
		switch {
		case !isStrict:
			return nil, invalid(err.Error())
		case directive == metav1.FieldValidationWarn:
			addStrictWarnings(ctx, append(strictErrs, se.Errors()...))
		default:
			return nil, invalid(runtime.NewStrictDecodingError(append(strictErrs, se.Errors()...)).Error())
		}
	} else if len(strictErrs) > 0 {
		if directive == metav1.FieldValidationWarn {
			addStrictWarnings(ctx, strictErrs)
		} else {
			return nil, invalid(runtime.NewStrictDecodingError(strictErrs).Error())
		}
	}
	u := obj.(*unstructured.Unstructured)
	return fm.UpdateNoErrors(live, u, manager).(*unstructured.Unstructured), nil
}

// applyPatch is server-side apply.
func (r *crRequest) applyPatch(ctx context.Context, live *unstructured.Unstructured, patch []byte, opts *metav1.PatchOptions, directive string, fm *managedfields.FieldManager) (*unstructured.Unstructured, error) {
	force := opts.Force != nil && *opts.Force
	// apimachinery's yaml keeps integers int64, as the object the strategy then validates must have them.
	patchObj := &unstructured.Unstructured{Object: map[string]interface{}{}}
	if err := utilyaml.Unmarshal(patch, &patchObj.Object); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	obj, err := fm.Apply(live, patchObj, opts.FieldManager, force)
	if err != nil {
		return nil, err
	}
	if directive == metav1.FieldValidationStrict || directive == metav1.FieldValidationWarn {
		if err := utilyaml.UnmarshalStrict(patch, &map[string]interface{}{}); err != nil {
			if directive == metav1.FieldValidationStrict {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", err))
			}
			addStrictWarnings(ctx, []error{err})
		}
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected %T from apply", obj)
	}
	return u, nil
}

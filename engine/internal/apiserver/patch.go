package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/registry/rest"
	kjson "sigs.k8s.io/json"

	"crdplay/engine/internal/crds"
)

// maxJSONPatchOperations is kube-apiserver's cap on the operations of one JSON patch.
const maxJSONPatchOperations = 10000

// The patch types an endpoint takes, in the order its 415 lists them. Custom resources (and their /status and
// /scale) take those of apiextensions-apiserver's CR handler; CRDs, a built-in type of the server, also take
// strategic merge patches.
var (
	crPatchTypes  = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}
	crdPatchTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType), string(types.ApplyYAMLPatchType)}
)

// patchRequest is a PATCH as its handler has read it before any patch mechanism runs.
type patchRequest struct {
	pt   types.PatchType
	body []byte
	opts *metav1.PatchOptions
}

// readPatch reads every PATCH, of a CRD or a custom resource, in the order of upstream's PatchResource
// handler: the patch type from Content-Type (one of supported, or 415), the body, the PatchOptions of the query,
// and whether the patch is JSON at all (YAML for apply).
func readPatch(req *http.Request, maxBytes int64, supported []string) (patchRequest, error) {
	pt := patchType(req.Header.Get("Content-Type"))
	if !slices.Contains(supported, string(pt)) {
		return patchRequest{}, negotiation.NewUnsupportedMediaTypeError(supported)
	}
	body, err := readBody(req, maxBytes)
	if err != nil {
		return patchRequest{}, err
	}
	opts := &metav1.PatchOptions{}
	if err := queryOptions(req, opts, "PatchOptions", func() field.ErrorList { return metav1validation.ValidatePatchOptions(opts, pt) }); err != nil {
		return patchRequest{}, err
	}
	if body, err = validatePatchBytes(body, pt); err != nil {
		return patchRequest{}, err
	}
	return patchRequest{pt: pt, body: body, opts: opts}, nil
}

// patchType is the patch type a Content-Type names, read as the PATCH handler reads it: what comes before the
// first ';' (a charset), exactly as sent, neither trimmed nor lower-cased.
func patchType(contentType string) types.PatchType {
	if i := strings.Index(contentType, ";"); i > 0 {
		contentType = contentType[:i]
	}
	return types.PatchType(contentType)
}

func (p patchRequest) dryRun() bool { return len(p.opts.DryRun) > 0 }

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

type jsonPatchOp struct {
	Op    string      `json:"op"`
	Path  string      `json:"path"`
	From  string      `json:"from"`
	Value interface{} `json:"value"`
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

func (r *crRequest) patch(strategy updateStrategy, fm *managedfields.FieldManager) (reply, error) {
	ctx := r.req.Context()
	p, err := readPatch(r.req, r.s.cfg.MaxRequestBytes, crPatchTypes)
	if err != nil {
		return reply{}, err
	}
	// The patch is applied inside the update, to the object each attempt reads; server-side apply creates a
	// missing object, as the PATCH handler's forceAllowCreate lets it.
	apply := p.pt == types.ApplyYAMLPatchType
	out, created, err := r.guaranteedUpdate(ctx, strategy, p.dryRun(), apply, func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return r.patched(ctx, live, p, fm)
	})
	if isTooLarge(err) && !apply {
		// As the PATCH handler does: managedFields can be large, so an object too large to store with them is
		// stored without them.
		out, created, err = r.guaranteedUpdate(ctx, strategy, p.dryRun(), false, func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			obj, err := r.patched(ctx, live, p, fm)
			if err == nil {
				obj.SetManagedFields(nil)
			}
			return obj, err
		})
	}
	if err != nil {
		return reply{}, err
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	return reply{code: code, obj: out}, nil
}

// isTooLarge reports a write the store refused for the object's size, by the texts upstream's isTooLargeError
// matches: etcd's request limit, and the gRPC client's limit on what it sends.
func isTooLarge(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return msg == "etcdserver: request is too large" || strings.Contains(msg, "trying to send message larger than max")
}

// patched is the object live becomes under the request's patch, checked against the URL.
func (r *crRequest) patched(ctx context.Context, live *unstructured.Unstructured, p patchRequest, fm *managedfields.FieldManager) (*unstructured.Unstructured, error) {
	directive := fieldValidation(p.opts.FieldValidation)
	var out *unstructured.Unstructured
	var err error
	if p.pt == types.ApplyYAMLPatchType {
		out, err = r.applyPatch(ctx, live, p.body, p.opts, directive, fm)
	} else {
		out, err = r.jsonPatch(ctx, live, p.body, p.pt, directive, fm, managerOrUserAgent(p.opts.FieldManager, r.req.UserAgent()))
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
	return out, r.admitUpdateMutation(ctx, out, live, p.dryRun())
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

func (r *crdRequest) patch() (reply, error) {
	ctx := r.req.Context()
	p, err := readPatch(r.req, r.s.cfg.MaxRequestBytes, crdPatchTypes)
	if err != nil {
		return reply{}, err
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if p.pt == types.ApplyYAMLPatchType {
		return r.apply(ctx, p.body, p.opts)
	}
	out, err := r.updateWith(ctx, r.info.Subresource == "status", p.dryRun(), managerOrUserAgent(p.opts.FieldManager, r.req.UserAgent()), func(live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
		return r.warn(crdPatched(live, p))
	})
	if err != nil {
		return reply{}, err
	}
	if !p.dryRun() {
		r.s.runControllers(ctx)
	}
	return reply{code: http.StatusOK, obj: out}, nil
}

// crdPatched is the CRD live becomes under a JSON, merge or strategic merge patch, with the patch's warnings.
func crdPatched(live *apiextensionsv1.CustomResourceDefinition, p patchRequest) (*apiextensionsv1.CustomResourceDefinition, []string, error) {
	if p.pt == types.StrategicMergePatchType {
		// CRDs are a built-in type of the server, so unlike custom resources they take strategic merge
		// patches, with the patch meta of their Go type.
		return crds.StrategicMergePatch(live, p.body, p.opts.FieldValidation)
	}
	cur, err := json.Marshal(live)
	if err != nil {
		return nil, nil, err
	}
	directive := fieldValidation(p.opts.FieldValidation)
	patched, strictErrs, err := applyJSPatch(cur, p.body, p.pt, directive)
	if err != nil {
		return nil, nil, err
	}
	return crds.DecodePatched(patched, strictErrs, directive)
}

// apply is server-side apply of a CRD (the caller holds the server's lock): an update of the stored CRD, or
// the creation of a missing one, as the PATCH handler's applyPatcher with the CRD registry's forceAllowCreate;
// /status never creates.
func (r *crdRequest) apply(ctx context.Context, body []byte, opts *metav1.PatchOptions) (reply, error) {
	status := r.info.Subresource == "status"
	fm := crdFieldManager(status)
	if crdFieldManagers().err != nil {
		return reply{}, apierrors.NewInternalError(crdFieldManagers().err)
	}
	force := opts.Force != nil && *opts.Force
	dryRun := len(opts.DryRun) > 0
	applyTo := func(live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
		return r.warn(crds.Apply(fm, live, body, opts.FieldManager, force, opts.FieldValidation))
	}
	var out *apiextensionsv1.CustomResourceDefinition
	for {
		// Another replica may create or delete the CRD between the read and the write: a create that finds the
		// name taken, or an update that finds the CRD gone, starts again, as the registry's Update does.
		if _, err := r.s.readCRD(ctx, r.info.Name); apierrors.IsNotFound(err) && !status {
			res, err := r.applyCreate(ctx, applyTo, dryRun)
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return res, err
		}
		var err error
		out, err = r.updateWith(ctx, status, dryRun, "", applyTo)
		if apierrors.IsNotFound(err) && !status {
			continue
		}
		if err != nil {
			return reply{}, err
		}
		break
	}
	if !dryRun {
		r.s.runControllers(ctx)
	}
	return reply{code: http.StatusOK, obj: out}, nil
}

// applyCreate is server-side apply of a missing CRD, which creates it.
func (r *crdRequest) applyCreate(ctx context.Context, applyTo func(live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error), dryRun bool) (reply, error) {
	crd, err := applyTo(&apiextensionsv1.CustomResourceDefinition{})
	if err != nil {
		return reply{}, err
	}
	if crd.UID != "" {
		return reply{}, apierrors.NewConflict(crdGR, r.info.Name, fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", crd.UID))
	}
	if crd.Name != r.info.Name {
		return reply{}, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", crd.Name, r.info.Name))
	}
	crd.CreationTimestamp = metav1.Time{}
	crd.DeletionTimestamp, crd.DeletionGracePeriodSeconds, crd.SelfLink, crd.Namespace = nil, nil, "", ""
	if err := r.s.admitMutation(ctx, r.req, r.admissionTarget(""), crd, nil, admission.Create, dryRun); err != nil {
		return reply{}, err
	}
	out, err := r.s.createCRD(ctx, crd, dryRun, r.validateCreate)
	if err != nil {
		return reply{}, err
	}
	if !dryRun {
		r.s.runControllers(ctx)
	}
	return reply{code: http.StatusCreated, obj: out}, nil
}

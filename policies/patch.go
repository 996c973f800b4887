package policies

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/yaml"

	"crdplay/internal/fieldmanager"
)

// patch is the PATCH handler for the four kinds: a JSON, merge or strategic merge patch applied to the live
// object's v1 JSON and decoded as an update body, or a server-side apply by the field manager (which creates a
// missing object, as the handler's forceAllowCreate lets it). The result goes through the registry's update.
func (a *API) patch(ctx context.Context, req *http.Request, r *resource, name string, status bool) (runtime.Object, error) {
	opts := &metav1.PatchOptions{}
	if err := queryOptions(req, opts); err != nil {
		return nil, err
	}
	pt := types.PatchType(strings.TrimSpace(strings.Split(req.Header.Get("Content-Type"), ";")[0]))
	if errs := metav1validation.ValidatePatchOptions(opts, pt); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, apierrors.NewRequestEntityTooLargeError(err.Error())
	}
	ctx = request.WithNamespace(ctx, "")
	s, fm := r.strategy, r.fm
	if status {
		s, fm = r.status, r.statusFM
	}
	manager := fieldmanager.Name(opts.FieldManager, req.UserAgent())
	dryRun := len(opts.DryRun) > 0
	live, rev, err := a.read(ctx, r, name)
	if apierrors.IsNotFound(err) && pt == types.ApplyYAMLPatchType && !status {
		return a.applyCreate(ctx, r, name, body, opts, dryRun)
	}
	if err != nil {
		return nil, err
	}
	var obj runtime.Object
	switch pt {
	case types.ApplyYAMLPatchType:
		patch := &unstructured.Unstructured{Object: map[string]any{}}
		if err := yaml.Unmarshal(body, &patch.Object); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
		}
		force := opts.Force != nil && *opts.Force
		if obj, err = fm.Apply(live, patch, manager, force); err != nil {
			return nil, err
		}
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType:
		versioned, err := legacyscheme.Scheme.ConvertToVersion(live, v1GV)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		current, err := runtime.Encode(legacyscheme.Codecs.LegacyCodec(v1GV), versioned)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := applyPatch(current, body, pt, versioned)
		if err != nil {
			return nil, err
		}
		obj, _, err = legacyscheme.Codecs.UniversalDecoder(internalGV).Decode(patched, nil, r.newObj())
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if m, _ := meta.Accessor(obj); m.GetName() != name {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
		}
		obj = fm.UpdateNoErrors(live, obj, manager)
	default:
		return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", a.gr(r), name,
			fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s, %s, %s",
				types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType), 0, false)
	}
	return a.write(ctx, r, name, s, obj, live, rev, dryRun)
}

// applyPatch applies a JSON, merge or strategic merge patch to current, as the patch handler's mechanisms do.
func applyPatch(current, patch []byte, pt types.PatchType, schemaObj runtime.Object) ([]byte, error) {
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		out, err := p.Apply(current)
		if err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return out, nil
	case types.MergePatchType:
		out, err := jsonpatch.MergePatch(current, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	default:
		out, err := strategicpatch.StrategicMergePatch(current, patch, schemaObj)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	}
}

// applyCreate is server-side apply of a missing object: the apply on an empty object, then the registry's
// create.
func (a *API) applyCreate(ctx context.Context, r *resource, name string, body []byte, opts *metav1.PatchOptions, dryRun bool) (runtime.Object, error) {
	patch := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(body, &patch.Object); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	empty := r.newObj()
	if m, err := meta.Accessor(empty); err == nil {
		m.SetName(name)
	}
	obj, err := r.fm.Apply(empty, patch, opts.FieldManager, opts.Force != nil && *opts.Force)
	if err != nil {
		return nil, err
	}
	if m, _ := meta.Accessor(obj); m.GetName() != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	return a.createObject(ctx, r, obj, dryRun)
}

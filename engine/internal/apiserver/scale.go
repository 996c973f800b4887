package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// scaleCodecs decode autoscaling/v1 Scale bodies. Built on first use, not at the browser engine's start-up.
var scaleCodecs = sync.OnceValue(func() serializer.CodecFactory {
	s := runtime.NewScheme()
	_ = autoscalingv1.AddToScheme(s)
	metav1.AddToGroupVersion(s, autoscalingv1.SchemeGroupVersion)
	return serializer.NewCodecFactory(s)
})

var scaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// invalidSpecReplicas marks a Scale built from an object without spec replicas, so that an update which does
// not set them can be told apart.
const invalidSpecReplicas = math.MinInt32

func splitPathDots(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }

// scaleOf builds the Scale view of a custom resource.
func (r *crRequest) scaleOf(cr *unstructured.Unstructured) (*autoscalingv1.Scale, bool, error) {
	sc := r.vi.subresources.Scale
	spec, found, err := unstructured.NestedInt64(cr.Object, splitPathDots(sc.SpecReplicasPath)...)
	if err != nil {
		return nil, false, err
	}
	status, ok, err := unstructured.NestedInt64(cr.Object, splitPathDots(sc.StatusReplicasPath)...)
	if err != nil {
		return nil, false, err
	} else if !ok {
		status = 0
	}
	var selector string
	if sc.LabelSelectorPath != nil && *sc.LabelSelectorPath != "" {
		if selector, _, err = unstructured.NestedString(cr.Object, splitPathDots(*sc.LabelSelectorPath)...); err != nil {
			return nil, false, err
		}
	}
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name: cr.GetName(), Namespace: cr.GetNamespace(), UID: cr.GetUID(),
			ResourceVersion: cr.GetResourceVersion(), CreationTimestamp: cr.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(spec)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(status), Selector: selector},
	}, found, nil
}

func (r *crRequest) serveScale() (reply, error) {
	switch r.info.Verb {
	case "get":
		cr, err := r.getObject(r.req.Context(), r.info.Namespace, r.info.Name)
		if err != nil {
			return reply{}, err
		}
		sc, found, err := r.scaleOf(cr)
		if err != nil {
			return reply{}, err
		}
		if !found {
			return reply{}, apierrors.NewInternalError(fmt.Errorf("the spec replicas field %q does not exist", r.vi.subresources.Scale.SpecReplicasPath))
		}
		return reply{code: http.StatusOK, obj: sc}, nil
	case "update", "patch":
		return r.updateScale()
	}
	return reply{}, apierrors.NewMethodNotSupported(r.gr(), r.info.Verb)
}

// scaleWrite is what a PUT or PATCH of /scale carries: the body (a Scale, or a patch of one, of type pt), and
// the manager and dry-run of its options.
type scaleWrite struct {
	body    []byte
	pt      types.PatchType // "" for PUT
	manager string
	dryRun  bool
}

// readScaleWrite reads a PUT of /scale as the update handler does, or a PATCH as every PATCH is read.
func (r *crRequest) readScaleWrite() (scaleWrite, error) {
	if r.info.Verb == "patch" {
		p, err := readPatch(r.req, r.s.cfg.MaxRequestBytes, crPatchTypes)
		if err != nil {
			return scaleWrite{}, err
		}
		return scaleWrite{body: p.body, pt: p.pt, manager: managerOrUserAgent(p.opts.FieldManager, r.req.UserAgent()), dryRun: p.dryRun()}, nil
	}
	if _, err := inputFormat(r.req, bodyMediaTypes); err != nil {
		return scaleWrite{}, err
	}
	body, err := readBody(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return scaleWrite{}, err
	}
	opts, err := updateOptions(r.req)
	if err != nil {
		return scaleWrite{}, err
	}
	return scaleWrite{body: body, manager: managerOrUserAgent(opts.FieldManager, r.req.UserAgent()), dryRun: len(opts.DryRun) > 0}, nil
}

// updateScale runs PUT and PATCH on /scale: the request changes a Scale view of the object, and the new
// replicas are written back into the object, which then goes through the main strategy.
func (r *crRequest) updateScale() (reply, error) {
	ctx := r.req.Context()
	sw, err := r.readScaleWrite()
	if err != nil {
		return reply{}, err
	}
	sc := r.vi.subresources.Scale
	gv := r.vi.kind.GroupVersion()
	mappings := r.ci.replicasPaths

	out, _, err := r.guaranteedUpdate(ctx, r.vi.strategy, sw.dryRun, false, func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		handler := managedfields.NewScaleHandler(live.GetManagedFields(), gv, mappings)
		oldScale, found, err := r.scaleOf(live)
		if err != nil {
			return nil, err
		}
		if !found {
			oldScale.Spec.Replicas = invalidSpecReplicas
		}
		if oldScale.ManagedFields, err = handler.ToSubresource(); err != nil {
			return nil, err
		}
		newScale, err := r.scaleFromRequest(ctx, oldScale, sw.body, sw.pt)
		if err != nil {
			return nil, err
		}
		if newScale.Name != r.info.Name {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", newScale.Name, r.info.Name))
		}
		if r.vi.scaleFM != nil {
			if s, ok := r.vi.scaleFM.UpdateNoErrors(oldScale, newScale, sw.manager).(*autoscalingv1.Scale); ok {
				newScale = s
			}
		}
		if newScale.Spec.Replicas == invalidSpecReplicas {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the spec replicas field %q cannot be empty", sc.SpecReplicasPath))
		}
		cr := live.DeepCopy()
		if err := unstructured.SetNestedField(cr.Object, int64(newScale.Spec.Replicas), splitPathDots(sc.SpecReplicasPath)...); err != nil {
			return nil, err
		}
		cr.SetResourceVersion(newScale.ResourceVersion)
		if newScale.ResourceVersion == "" {
			cr.SetResourceVersion(live.GetResourceVersion())
		}
		entries, err := handler.ToParent(newScale.ManagedFields)
		if err != nil {
			return nil, err
		}
		cr.SetManagedFields(entries)
		return cr, nil
	})
	if err != nil {
		return reply{}, err
	}
	result, _, err := r.scaleOf(out)
	if err != nil {
		return reply{}, apierrors.NewBadRequest(err.Error())
	}
	return reply{code: http.StatusOK, obj: result}, nil
}

// scaleFromRequest decodes a PUT body, or applies a patch to the current Scale.
func (r *crRequest) scaleFromRequest(_ context.Context, old *autoscalingv1.Scale, body []byte, pt types.PatchType) (*autoscalingv1.Scale, error) {
	data := body
	if pt != "" {
		cur, err := json.Marshal(old)
		if err != nil {
			return nil, err
		}
		switch pt {
		case types.JSONPatchType:
			p, err := jsonpatch.DecodePatch(body)
			if err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			if data, err = p.Apply(cur); err != nil {
				return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
			}
		case types.MergePatchType:
			if data, err = jsonpatch.MergePatch(cur, body); err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
		default:
			return nil, apierrors.NewBadRequest("apply is not supported on /scale")
		}
	}
	out := &autoscalingv1.Scale{}
	obj, gvk, err := scaleCodecs().UniversalDecoder(autoscalingv1.SchemeGroupVersion).Decode(data, &scaleGVK, out)
	if err != nil {
		return nil, decodeError("Scale", err, gvk, data)
	}
	s, ok := obj.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("wrong object passed to Scale update: %v", obj))
	}
	return s, nil
}

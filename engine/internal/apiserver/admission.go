package apiserver

import (
	"context"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"

	"crdplay/engine/internal/crds"
)

// The admission chain (Config.Admission) runs where kube-apiserver's handlers and registry run theirs: mutating
// admission on the decoded request object once its managedFields are updated (create) or once the update or
// patch made the new object (update, patch, apply), and validating admission on the object the strategy
// prepared and validated, just before the write (the registry's createValidation / updateValidation), and on
// deletes. Without a chain, every step here is a no-op. A /scale write is not admitted: kube-apiserver admits the
// Scale object there, which the engine's scale handler does not build.

// defaultUser is who the engine's requests come from when the front end names nobody: the administrator of a
// kubeadm or kind cluster, as a CRD author's kubectl usually is. Policies see it in request.userInfo.
var defaultUser = &user.DefaultInfo{Name: "kubernetes-admin", Groups: []string{"kubeadm:cluster-admins", user.AllAuthenticated}}

func requestUser(ctx context.Context) user.Info {
	if u, ok := request.UserFrom(ctx); ok {
		return u
	}
	return defaultUser
}

// admissionOptions are the options object admission sees for op: a PATCH and a PUT are both updates, and
// the update handlers give admission UpdateOptions, or CreateOptions when an update creates the object.
func admissionOptions(req *http.Request, op admission.Operation) runtime.Object {
	q := req.URL.Query()
	switch op {
	case admission.Create:
		return &metav1.CreateOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
	case admission.Update:
		return &metav1.UpdateOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
	}
	return nil
}

// admissionTarget names what a request writes, for its admission attributes.
type admissionTarget struct {
	kind        schema.GroupVersionKind
	resource    schema.GroupVersionResource
	subresource string
	namespace   string
	name        string
	objects     admission.ObjectInterfaces
}

func (s *Server) attributes(ctx context.Context, req *http.Request, t admissionTarget, obj, old runtime.Object, op admission.Operation, dryRun bool) admission.Attributes {
	name := t.name
	if name == "" {
		// A create's name is the object's (generated names included), as the registry's createValidation sees it.
		if m, ok := obj.(metav1.Object); ok {
			name = m.GetName()
		}
	}
	return admission.NewAttributesRecord(obj, old, t.kind, t.namespace, name, t.resource, t.subresource, op,
		admissionOptions(req, op), dryRun, requestUser(ctx))
}

// admitMutation runs the mutating half of the chain on obj, which it may change in place.
func (s *Server) admitMutation(ctx context.Context, req *http.Request, t admissionTarget, obj, old runtime.Object, op admission.Operation, dryRun bool) error {
	m, ok := s.cfg.Admission.(admission.MutationInterface)
	if !ok || !m.Handles(op) || t.subresource == "scale" {
		return nil
	}
	return m.Admit(ctx, s.attributes(ctx, req, t, obj, old, op, dryRun), t.objects)
}

// admitValidation runs the validating half of the chain on a copy of obj, as the registry does.
func (s *Server) admitValidation(ctx context.Context, req *http.Request, t admissionTarget, obj, old runtime.Object, op admission.Operation, dryRun bool) error {
	v, ok := s.cfg.Admission.(admission.ValidationInterface)
	if !ok || !v.Handles(op) || t.subresource == "scale" {
		return nil
	}
	if obj != nil {
		obj = obj.DeepCopyObject()
	}
	return v.Validate(ctx, s.attributes(ctx, req, t, obj, old, op, dryRun), t.objects)
}

// admitDelete runs the validating half of the chain on the delete of old.
func (s *Server) admitDelete(ctx context.Context, req *http.Request, t admissionTarget, old runtime.Object, opts *metav1.DeleteOptions) error {
	v, ok := s.cfg.Admission.(admission.ValidationInterface)
	if !ok || !v.Handles(admission.Delete) {
		return nil
	}
	a := admission.NewAttributesRecord(nil, old, t.kind, t.namespace, t.name, t.resource, t.subresource, admission.Delete,
		opts, len(opts.DryRun) > 0, requestUser(ctx))
	return v.Validate(ctx, a, t.objects)
}

// admissionTarget is the target of a custom resource request: the version and subresource it addresses.
func (r *crRequest) admissionTarget(name string) admissionTarget {
	t := admissionTarget{
		kind:        r.vi.kind,
		resource:    schema.GroupVersionResource{Group: r.info.APIGroup, Version: r.info.APIVersion, Resource: r.info.Resource},
		subresource: r.info.Subresource,
		namespace:   r.info.Namespace,
		name:        name,
		objects:     crObjectInterfaces{ci: r.ci},
	}
	return t
}

// crdAdmissionTarget is the target of a CustomResourceDefinition request.
func (r *crdRequest) admissionTarget(name string) admissionTarget {
	return admissionTarget{
		kind:        apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"),
		resource:    apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"),
		subresource: r.info.Subresource,
		name:        name,
		objects:     admission.NewObjectInterfacesFromScheme(crds.Scheme()),
	}
}

// crObjectInterfaces are a custom resource's scheme for admission, as the CR handler's request scope gives
// it: unstructured objects, converted between the CRD's versions by its converter, every served version of the
// resource equivalent to the others (matchPolicy: Equivalent).
type crObjectInterfaces struct{ ci *crdInfo }

func (c crObjectInterfaces) GetObjectCreater() runtime.ObjectCreater { return unstructuredCreator{} }
func (c crObjectInterfaces) GetObjectTyper() runtime.ObjectTyper     { return unstructuredTyper{} }
func (c crObjectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter {
	return defaulter{c.ci.structural, c.ci.gk}
}
func (c crObjectInterfaces) GetObjectConvertor() runtime.ObjectConvertor { return c.ci.safeConverter }
func (c crObjectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	reg := runtime.NewEquivalentResourceRegistry()
	crd := c.ci.crd
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Status.AcceptedNames.Plural}
		kind := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Status.AcceptedNames.Kind}
		reg.RegisterKindFor(gvr, "", kind)
		if v.Subresources != nil && v.Subresources.Status != nil {
			reg.RegisterKindFor(gvr, "status", kind)
		}
		if v.Subresources != nil && v.Subresources.Scale != nil {
			reg.RegisterKindFor(gvr, "scale", schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"})
		}
	}
	return reg
}

// admissionGroup is the API group of admission configuration, which a chain that is a groupServer serves.
const admissionGroup = "admissionregistration.k8s.io"

// groupServer is an admission chain that serves its configuration's API group (admissionGroup, version v1).
type groupServer interface {
	http.Handler
	// APIResources are the group's v1 resources as discovery lists them.
	APIResources() []metav1.APIResource
	// OpenAPIV3 is the group version's OpenAPI v3 document (admissionOpenAPIPath), which kubectl validates
	// and explains its kinds with.
	OpenAPIV3() []byte
}

// admissionOpenAPIPath is the /openapi/v3 index path of admissionGroup's v1.
const admissionOpenAPIPath = "apis/" + admissionGroup + "/v1"

// admissionResources are the resources of admissionGroup's v1 the chain serves; none without one.
func (s *Server) admissionResources() []metav1.APIResource {
	if g, ok := s.cfg.Admission.(groupServer); ok {
		return g.APIResources()
	}
	return nil
}

// admissionGroupDiscovery is admissionGroup as /apis lists it.
var admissionGroupDiscovery = metav1.APIGroup{
	Name:             admissionGroup,
	Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: admissionGroup + "/v1", Version: "v1"}},
	PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: admissionGroup + "/v1", Version: "v1"},
}

// warningWriter adds a request's warnings to the answer another handler writes, as the engine's own answers
// carry them.
type warningWriter struct {
	http.ResponseWriter
	rec   *warnings
	wrote bool
}

func (w *warningWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		for _, h := range w.rec.headers() {
			w.Header().Add("Warning", h)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *warningWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

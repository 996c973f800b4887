package policies

import (
	"context"
	"encoding/json"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/apiserver/pkg/registry/rest"
	admissionregistrationv1apply "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	"k8s.io/client-go/discovery"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	clientrest "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"crdplay/internal/inproc"
)

// statusManager is the field manager of kube-controller-manager's ValidatingAdmissionPolicy status controller
// (its ControllerName), which applies the status with Force.
const statusManager = "validatingadmissionpolicy-status"

// typeCheck is the status controller's reconcile of the policy name (pkg/controller/validatingadmissionpolicystatus
// in k8s.io/kubernetes): a policy whose generation is newer than its status's gets its expressions type-checked
// by upstream's TypeChecker against the schemas of what it matches, and the result server-side applied to its
// status. The controller's own failures never fail the write that triggered it; they are logged, as a
// controller's are.
func (a *API) typeCheck(ctx context.Context, r *resource, name string) {
	if r.plural != "validatingadmissionpolicies" {
		return
	}
	live, rev, err := a.read(ctx, r, name)
	if err != nil {
		klog.ErrorS(err, "ValidatingAdmissionPolicy status", "policy", name)
		return
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := legacyscheme.Scheme.Convert(live, policy, nil); err != nil {
		klog.ErrorS(err, "ValidatingAdmissionPolicy status", "policy", name)
		return
	}
	if policy.Generation <= policy.Status.ObservedGeneration {
		return
	}
	warnings := a.typeChecker().Check(policy)
	cfgs := make([]*admissionregistrationv1apply.ExpressionWarningApplyConfiguration, 0, len(warnings))
	for _, w := range warnings {
		cfgs = append(cfgs, admissionregistrationv1apply.ExpressionWarning().WithFieldRef(w.FieldRef).WithWarning(w.Warning))
	}
	apply := admissionregistrationv1apply.ValidatingAdmissionPolicy(policy.Name).
		WithStatus(admissionregistrationv1apply.ValidatingAdmissionPolicyStatus().
			WithObservedGeneration(policy.Generation).
			WithTypeChecking(admissionregistrationv1apply.TypeChecking().WithExpressionWarnings(cfgs...)))
	// What the controller's ApplyStatus sends, as the apply patch handler reads it.
	data, err := json.Marshal(apply)
	if err != nil {
		klog.ErrorS(err, "ValidatingAdmissionPolicy status", "policy", name)
		return
	}
	patch := &unstructured.Unstructured{Object: map[string]any{}}
	if err := json.Unmarshal(data, &patch.Object); err != nil {
		klog.ErrorS(err, "ValidatingAdmissionPolicy status", "policy", name)
		return
	}
	if err := a.writeStatus(ctx, r, name, live, rev, patch); err != nil {
		klog.ErrorS(err, "ValidatingAdmissionPolicy status", "policy", name)
	}
}

// typeChecker is the status controller's, as kube-controller-manager builds it: schemas from the generated
// definitions of the built-in types it knows (here apiextensions', the only built-in kind the engine serves)
// combined with the server's OpenAPI v3 for custom resources, and a REST mapper over the server's discovery.
func (a *API) typeChecker() *validating.TypeChecker {
	disc, err := discovery.NewDiscoveryClientForConfig(&clientrest.Config{Host: "http://apiserver.invalid", Transport: inproc.Transport{Handler: a.server}})
	if err != nil {
		panic(err) // only a malformed host can make it fail
	}
	return &validating.TypeChecker{
		SchemaResolver: resolver.NewDefinitionsSchemaResolver(apiextensionsopenapi.GetOpenAPIDefinitions, apiextensionsscheme.Scheme).
			Combine(&resolver.ClientDiscoveryResolver{Discovery: disc}),
		RestMapper: restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(disc)),
	}
}

// writeStatus applies patch to the status of live (read at rev) with the controller's field manager, forced,
// and writes the result through the status strategy, as the apply PATCH of /status does.
func (a *API) writeStatus(ctx context.Context, r *resource, name string, live runtime.Object, rev int64, patch *unstructured.Unstructured) error {
	obj, err := r.statusFM.Apply(live, patch, statusManager, true)
	if err != nil {
		return err
	}
	if err := rest.BeforeUpdate(r.status, ctx, obj, live); err != nil {
		return err
	}
	data, err := runtime.Encode(legacyscheme.Codecs.LegacyCodec(v1GV), obj)
	if err != nil {
		return err
	}
	if _, err := a.store.Update(ctx, a.key(r, name), data, rev); err != nil {
		return err
	}
	a.markChanged()
	return nil
}

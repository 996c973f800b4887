package policies

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
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
	checker, err := a.typeChecker()
	if err != nil {
		klog.ErrorS(err, "ValidatingAdmissionPolicy status", "policy", name)
		return
	}
	warnings := checker.Check(policy)
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
func (a *API) typeChecker() (*validating.TypeChecker, error) {
	disc, err := inProcessDiscovery(a.server)
	if err != nil {
		return nil, err
	}
	return &validating.TypeChecker{
		SchemaResolver: definitionsResolver().Combine(&resolver.ClientDiscoveryResolver{Discovery: disc}),
		RestMapper:     restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(disc)),
	}, nil
}

// definitionsResolver resolves the schemas of apiextensions' kinds from their generated definitions, built
// once: they do not change, and every type check needs them.
var definitionsResolver = sync.OnceValue(func() *resolver.DefinitionsSchemaResolver {
	return resolver.NewDefinitionsSchemaResolver(apiextensionsopenapi.GetOpenAPIDefinitions, apiextensionsscheme.Scheme)
})

// inProcessDiscovery is a discovery client of server that reaches it in process: no connection is opened.
func inProcessDiscovery(server http.Handler) (*discovery.DiscoveryClient, error) {
	return discovery.NewDiscoveryClientForConfig(&clientrest.Config{Host: "http://apiserver.invalid", Transport: inproc.Transport{Handler: server}})
}

// writeStatus applies patch to the status of live (read at rev) with the controller's field manager, forced,
// and writes the result through the status endpoint's update, as the apply PATCH of /status does.
func (a *API) writeStatus(ctx context.Context, r *resource, name string, live runtime.Object, rev int64, patch *unstructured.Unstructured) error {
	obj, err := r.statusFM.Apply(live, patch, statusManager, true)
	if err != nil {
		return err
	}
	_, err = a.write(ctx, r, name, r.status, obj, live, rev, false)
	return err
}

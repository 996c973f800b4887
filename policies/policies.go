// Package policies is the admission-policy chain of kube-apiserver for a fixed set of admission configuration:
// the ValidatingAdmissionPolicy and MutatingAdmissionPolicy plugins of k8s.io/apiserver, whole and unchanged,
// fed with one set of policies, bindings, params objects and namespaces.
//
// Upstream's plugins read their configuration through informers and recompile it on a one-second timer, so a
// policy written to a real cluster takes effect a moment later. A playground must answer the same way every
// time, so a Chain is built for one state of that configuration and is ready before its first answer: its
// informers list what the Set holds (from in-memory clients), and New waits until the plugins' policy sources
// have compiled it. A change of configuration is a new Chain.
//
// The package is for native hosts only: upstream's plugins bring client-go's clientsets and informers, which the
// browser build leaves out for size (docs/architecture.md, "Admission policies").
package policies

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/discovery"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	basecompatibility "k8s.io/component-base/compatibility"
)

// Set is one state of a cluster's admission configuration and of the objects the policies read.
type Set struct {
	ValidatingPolicies []*admissionregistrationv1.ValidatingAdmissionPolicy
	ValidatingBindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	MutatingPolicies   []*admissionregistrationv1.MutatingAdmissionPolicy
	MutatingBindings   []*admissionregistrationv1.MutatingAdmissionPolicyBinding
	// Namespaces are what namespaceSelectors match against.
	Namespaces []*corev1.Namespace
	// ConfigMaps can be params (paramKind v1 ConfigMap).
	ConfigMaps []*corev1.ConfigMap
	// Params are custom resources policies may name as params; ParamMappings say where each kind is served.
	Params        []*unstructured.Unstructured
	ParamMappings []meta.RESTMapping
	// Server is the API server the chain belongs to (the engine's handler), which the mutating plugin asks
	// for the OpenAPI v3 schemas of the objects it patches, as upstream's asks its own server through a
	// loopback client. Requests go to it in process. Nil answers them 404: objects are patched without a
	// schema.
	Server http.Handler
}

// Chain is the admission chain of one Set, in kube-apiserver's plugin order: MutatingAdmissionPolicy, then
// ValidatingAdmissionPolicy. It implements admission.MutationInterface and admission.ValidationInterface.
type Chain struct {
	// chain is kube-apiserver's composition of the plugins: a chain handler in plugin order, wrapped in the
	// reinvocation handler that runs the mutating plugins once more when a later one changed the object
	// (reinvocationPolicy: IfNeeded).
	chain admission.Interface
	stop  context.CancelFunc
}

var (
	_ admission.MutationInterface   = (*Chain)(nil)
	_ admission.ValidationInterface = (*Chain)(nil)
)

// New builds and starts the chain of set. Close stops it.
func New(set Set) (*Chain, error) {
	objects := copies(nil, set.ValidatingPolicies)
	objects = copies(objects, set.ValidatingBindings)
	objects = copies(objects, set.MutatingPolicies)
	objects = copies(objects, set.MutatingBindings)
	objects = copies(objects, set.Namespaces)
	objects = copies(objects, set.ConfigMaps)
	server := set.Server
	if server == nil {
		server = http.NotFoundHandler()
	}
	disc, err := inProcessDiscovery(server)
	if err != nil {
		return nil, err
	}
	client := withDiscovery{fake.NewClientset(objects...), disc}

	paramScheme := runtime.NewScheme()
	if err := scheme.AddToScheme(paramScheme); err != nil {
		return nil, err
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	listKinds := map[schema.GroupVersionResource]string{}
	for _, m := range set.ParamMappings {
		mapper.AddSpecific(m.GroupVersionKind, m.Resource, m.Resource, m.Scope)
		if !paramScheme.Recognizes(m.GroupVersionKind) {
			paramScheme.AddKnownTypeWithName(m.GroupVersionKind, &unstructured.Unstructured{})
			paramScheme.AddKnownTypeWithName(m.GroupVersionKind.GroupVersion().WithKind(m.GroupVersionKind.Kind+"List"), &unstructured.UnstructuredList{})
		}
		listKinds[m.Resource] = m.GroupVersionKind.Kind + "List"
	}
	params := copies(copies(nil, set.Params), set.ConfigMaps)
	dynamic := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(paramScheme, listKinds, params...)

	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactory(client, 0)
	init := initializer.New(client, dynamic, factory, authorizerfactory.NewAlwaysAllowAuthorizer(),
		utilfeature.DefaultFeatureGate, compatibility.DefaultComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent), ctx.Done(), mapper)

	// As kube-apiserver builds its chain: registered plugins, made and initialized by name in its order,
	// composed by upstream into a chain handler wrapped in the reinvocation handler (reinvocationPolicy:
	// IfNeeded runs the mutating plugins once more when a later one changed the object).
	plugins := admission.NewPlugins()
	mutating.Register(plugins)
	validating.Register(plugins)
	made := &madePlugins{}
	chain, err := plugins.NewFromPlugins([]string{mutating.PluginName, validating.PluginName}, noConfig{}, init, made)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("admission policy plugins: %w", err)
	}
	factory.Start(ctx.Done())
	c := &Chain{chain: chain, stop: cancel}
	// WaitForReady polls a plugin's policy source, which compiles the Set once its informers listed it; it
	// gives up after upstream's ten seconds, which only a fault reaches here.
	for _, p := range made.plugins {
		if r, ok := p.(interface{ WaitForReady() bool }); ok && !r.WaitForReady() {
			c.Close()
			return nil, errors.New("admission policy plugins did not compile the policies")
		}
	}
	return c, nil
}

// copies appends deep copies of objs to out: the in-memory clients keep the objects they are given, and the
// Set's stay the caller's.
func copies[T runtime.Object](out []runtime.Object, objs []T) []runtime.Object {
	for _, o := range objs {
		out = append(out, o.DeepCopyObject())
	}
	return out
}

// Close stops the chain's informers and plugins.
func (c *Chain) Close() { c.stop() }

// Handles reports whether either plugin acts on operation.
func (c *Chain) Handles(operation admission.Operation) bool { return c.chain.Handles(operation) }

// Admit runs the mutating policies on a write, as the mutating admission step of kube-apiserver's handlers.
func (c *Chain) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	return c.chain.(admission.MutationInterface).Admit(ctx, a, o)
}

// Validate runs the validating policies on a write, as the registry's create/update/delete validation.
func (c *Chain) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	return c.chain.(admission.ValidationInterface).Validate(ctx, a, o)
}

// noConfig gives every plugin an empty configuration file, as kube-apiserver without
// --admission-control-config-file does.
type noConfig struct{}

func (noConfig) ConfigFor(string) (io.Reader, error) { return nil, nil }

// madePlugins keeps the plugins NewFromPlugins makes, to wait for their first compilation.
type madePlugins struct{ plugins []admission.Interface }

func (m *madePlugins) Decorate(p admission.Interface, _ string) admission.Interface {
	m.plugins = append(m.plugins, p)
	return p
}

// withDiscovery is the in-memory clientset with the server's discovery: the fake clientset's own cannot
// answer OpenAPI v3 requests.
type withDiscovery struct {
	*fake.Clientset
	disc discovery.DiscoveryInterfaces
}

func (w withDiscovery) Discovery() discovery.DiscoveryInterfaces { return w.disc }

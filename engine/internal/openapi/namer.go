package openapi

import (
	"strings"
	"sync"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Upstream names definitions with apiserver's DefinitionNamer over client-go's kubernetes scheme: a definition
// whose Go type is registered there gets an x-kubernetes-group-version-kind extension listing every kind it is
// registered as. Importing that scheme would pull every k8s.io/api group into the wasm build, so the registrations
// that matter are written out here; TestNamerMatchesClientGoScheme checks them against the real scheme for every
// definition the generated OpenAPI package knows.

// schemeGroupVersions are the group versions of client-go's kubernetes scheme (v0.37.2), sorted by group then
// version as the namer sorts them. "" is the core group, whose v1 also carries the unversioned meta types.
var schemeGroupVersions = []string{
	"/v1",
	"admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1alpha1", "admissionregistration.k8s.io/v1beta1",
	"apps/v1", "apps/v1beta1", "apps/v1beta2",
	"authentication.k8s.io/v1", "authentication.k8s.io/v1alpha1", "authentication.k8s.io/v1beta1",
	"authorization.k8s.io/v1", "authorization.k8s.io/v1beta1",
	"autoscaling/v1", "autoscaling/v2",
	"batch/v1", "batch/v1beta1",
	"certificates.k8s.io/v1", "certificates.k8s.io/v1alpha1", "certificates.k8s.io/v1beta1",
	"coordination.k8s.io/v1", "coordination.k8s.io/v1alpha2", "coordination.k8s.io/v1beta1",
	"discovery.k8s.io/v1", "discovery.k8s.io/v1beta1",
	"events.k8s.io/v1", "events.k8s.io/v1beta1",
	"extensions/v1beta1",
	"flowcontrol.apiserver.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1beta1", "flowcontrol.apiserver.k8s.io/v1beta2", "flowcontrol.apiserver.k8s.io/v1beta3",
	"internal.apiserver.k8s.io/v1alpha1",
	"lifecycle.k8s.io/v1alpha1",
	"networking.k8s.io/v1", "networking.k8s.io/v1beta1",
	"node.k8s.io/v1", "node.k8s.io/v1alpha1", "node.k8s.io/v1beta1",
	"policy/v1", "policy/v1beta1",
	"rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1alpha1", "rbac.authorization.k8s.io/v1beta1",
	"resource.k8s.io/v1", "resource.k8s.io/v1alpha3", "resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2",
	"scheduling.k8s.io/v1", "scheduling.k8s.io/v1alpha3", "scheduling.k8s.io/v1beta1",
	"storage.k8s.io/v1", "storage.k8s.io/v1alpha1", "storage.k8s.io/v1beta1",
	"storagemigration.k8s.io/v1", "storagemigration.k8s.io/v1beta1",
}

const metaV1 = "io.k8s.apimachinery.pkg.apis.meta.v1."

// perGroupVersionKinds are the meta types metav1.AddToGroupVersion registers in every group version.
var perGroupVersionKinds = []string{"WatchEvent", "ListOptions", "GetOptions", "DeleteOptions", "CreateOptions", "UpdateOptions", "PatchOptions"}

// registeredKinds maps a definition name to its kinds as "group/version/Kind", built from the tables above on
// first use (not at the browser engine's start-up).
var registeredKinds = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, kind := range perGroupVersionKinds {
		for _, gv := range schemeGroupVersions {
			m[metaV1+kind] = append(m[metaV1+kind], gv+"/"+kind)
		}
	}
	// The internal WatchEvent type is registered under each group's internal version.
	seen := map[string]bool{}
	for _, gv := range schemeGroupVersions {
		group, _, _ := strings.Cut(gv, "/")
		if !seen[group] {
			seen[group] = true
			m[metaV1+"InternalEvent"] = append(m[metaV1+"InternalEvent"], group+"/__internal/WatchEvent")
		}
	}
	for _, kind := range []string{"Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList"} {
		m[metaV1+kind] = []string{"/v1/" + kind}
	}
	for _, kind := range []string{"Scale", "HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"} {
		m["io.k8s.api.autoscaling.v1."+kind] = []string{"autoscaling/v1/" + kind}
	}
	return m
})

// definitionName implements common.Config.GetDefinitionName: names are kept, registered kinds are listed.
func definitionName(name string) (string, spec.Extensions) {
	kinds, ok := registeredKinds()[name]
	if !ok {
		return name, nil
	}
	gvks := make([]interface{}, len(kinds))
	for i, k := range kinds {
		parts := strings.SplitN(k, "/", 3)
		gvks[i] = map[string]interface{}{"group": parts[0], "version": parts[1], "kind": parts[2]}
	}
	return name, spec.Extensions{extGVK: gvks}
}

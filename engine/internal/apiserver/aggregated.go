package apiserver

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// aggregatedContentType is the media type of aggregated discovery, which clients ask for in Accept.
const aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// wantsAggregated reports whether the Accept header asks for aggregated discovery (v2).
func wantsAggregated(req *http.Request) bool {
	for _, part := range strings.Split(req.Header.Get("Accept"), ",") {
		p := strings.ReplaceAll(part, " ", "")
		if strings.Contains(p, "g=apidiscovery.k8s.io") && strings.Contains(p, "v=v2") && strings.Contains(p, "as=APIGroupDiscoveryList") {
			return true
		}
	}
	return false
}

// aggregatedDiscovery is /apis as one document: every group, its versions newest first, and their resources, as
// the CRD discovery controller reports them to kube-apiserver's aggregated discovery.
func (s *Server) aggregatedDiscovery(req *http.Request) (*apidiscoveryv2.APIGroupDiscoveryList, error) {
	all, _, err := s.listCRDs(req.Context())
	if err != nil {
		return nil, err
	}
	out := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"}}
	crdVerbs := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	out.Items = append(out.Items, apidiscoveryv2.APIGroupDiscovery{
		ObjectMeta: metav1.ObjectMeta{Name: apiextensionsv1.GroupName},
		Versions: []apidiscoveryv2.APIVersionDiscovery{{
			Version: "v1", Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
			Resources: []apidiscoveryv2.APIResourceDiscovery{{
				Resource: "customresourcedefinitions", SingularResource: "customresourcedefinition", Scope: apidiscoveryv2.ScopeCluster,
				ResponseKind: &metav1.GroupVersionKind{Group: apiextensionsv1.GroupName, Version: "v1", Kind: "CustomResourceDefinition"},
				Verbs:        crdVerbs, ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
				Subresources: []apidiscoveryv2.APISubresourceDiscovery{{
					Subresource:  "status",
					ResponseKind: &metav1.GroupVersionKind{Group: apiextensionsv1.GroupName, Version: "v1", Kind: "CustomResourceDefinition"},
					Verbs:        []string{"get", "patch", "update"},
				}},
			}},
		}},
	})
	if res := s.admissionResources(); len(res) > 0 {
		out.Items = append(out.Items, aggregatedGroup(admissionGroup, "v1", res))
	}
	groups := map[string]map[string][]apidiscoveryv2.APIResourceDiscovery{}
	for _, crd := range all {
		if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		names := crd.Status.AcceptedNames
		scope := apidiscoveryv2.ScopeCluster
		if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
			scope = apidiscoveryv2.ScopeNamespace
		}
		verbs := []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
		if apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating) {
			verbs = []string{"delete", "deletecollection", "get", "list", "watch"}
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			kind := &metav1.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: names.Kind}
			res := apidiscoveryv2.APIResourceDiscovery{
				Resource: names.Plural, SingularResource: names.Singular, Scope: scope, ResponseKind: kind,
				Verbs: verbs, ShortNames: names.ShortNames, Categories: names.Categories,
			}
			if sub, _ := apihelpers.GetSubresourcesForVersion(crd, v.Name); sub != nil {
				if sub.Status != nil {
					res.Subresources = append(res.Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: "status", ResponseKind: kind, Verbs: []string{"get", "patch", "update"}})
				}
				if sub.Scale != nil {
					res.Subresources = append(res.Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: "scale", ResponseKind: &metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: []string{"get", "patch", "update"}})
				}
			}
			if groups[crd.Spec.Group] == nil {
				groups[crd.Spec.Group] = map[string][]apidiscoveryv2.APIResourceDiscovery{}
			}
			groups[crd.Spec.Group][v.Name] = append(groups[crd.Spec.Group][v.Name], res)
		}
	}
	groupNames := make([]string, 0, len(groups))
	for g := range groups {
		groupNames = append(groupNames, g)
	}
	sort.Strings(groupNames)
	for _, g := range groupNames {
		var versions []string
		for v := range groups[g] {
			versions = append(versions, v)
		}
		sort.Slice(versions, func(i, j int) bool { return compareKubeAware(versions[i], versions[j]) > 0 })
		gd := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g}}
		for _, v := range versions {
			res := groups[g][v]
			sort.Slice(res, func(i, j int) bool { return res[i].Resource < res[j].Resource })
			gd.Versions = append(gd.Versions, apidiscoveryv2.APIVersionDiscovery{Version: v, Resources: res, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent})
		}
		out.Items = append(out.Items, gd)
	}
	return out, nil
}

func (s *Server) writeAggregated(w http.ResponseWriter, req *http.Request, rec *warnings) {
	list, err := s.aggregatedDiscovery(req)
	if err != nil {
		s.fail(w, req, rec, storageUnavailable(err))
		return
	}
	data, err := json.Marshal(list)
	if err != nil {
		s.fail(w, req, rec, err)
		return
	}
	w.Header().Set("Content-Type", aggregatedContentType)
	w.Header().Set("Vary", "Accept")
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

// aggregatedGroup is one version of a built-in group's resources (a discovery APIResourceList's, with the
// subresources under their resources) as aggregated discovery lists them.
func aggregatedGroup(group, version string, list []metav1.APIResource) apidiscoveryv2.APIGroupDiscovery {
	var res []apidiscoveryv2.APIResourceDiscovery
	for _, r := range list {
		kind := &metav1.GroupVersionKind{Group: group, Version: version, Kind: r.Kind}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		if parent, sub, ok := strings.Cut(r.Name, "/"); ok {
			for i := range res {
				if res[i].Resource == parent {
					res[i].Subresources = append(res[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: sub, ResponseKind: kind, Verbs: r.Verbs})
				}
			}
			continue
		}
		res = append(res, apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Name, SingularResource: r.SingularName, Scope: scope, ResponseKind: kind,
			Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
		})
	}
	return apidiscoveryv2.APIGroupDiscovery{
		ObjectMeta: metav1.ObjectMeta{Name: group},
		Versions:   []apidiscoveryv2.APIVersionDiscovery{{Version: version, Resources: res, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}},
	}
}

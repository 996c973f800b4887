package apiserver

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"runtime"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/util/compatibility"
	basecompatibility "k8s.io/component-base/compatibility"
)

// GitVersion is the Kubernetes release the engine reproduces.
const GitVersion = "v1.37.2"

// kubeVersion is what /version reports: the Kubernetes release whose behaviour the engine reproduces, the
// emulation and minimum compatibility versions of the kube component's effective version (what
// --emulated-version set, as the generic server's /version handler reads them), and component-base's values for
// the commit and build date of a build that does not stamp them (as the oracle's).
func kubeVersion() version.Info {
	info := version.Info{
		Major: "1", Minor: "37",
		GitVersion: GitVersion, GitCommit: "$Format:%H$", GitTreeState: "clean", BuildDate: "1970-01-01T00:00:00Z",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	ev := compatibility.DefaultComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent)
	if e := ev.EmulationVersion(); e != nil {
		info.EmulationMajor, info.EmulationMinor = utilversion.Itoa(e.Major()), utilversion.Itoa(e.Minor())
	}
	if m := ev.MinCompatibilityVersion(); m != nil {
		info.MinCompatibilityMajor, info.MinCompatibilityMinor = utilversion.Itoa(m.Major()), utilversion.Itoa(m.Minor())
	}
	return info
}

func (s *Server) serveNonResource(w http.ResponseWriter, req *http.Request, rec *warnings, info *request.RequestInfo) {
	if info.Verb != "get" {
		s.notFound(w, req, rec)
		return
	}
	parts := splitPath(info.Path)
	mt := negotiation.MediaTypeOptions{}
	switch {
	case len(parts) >= 2 && parts[0] == "openapi":
		s.serveOpenAPI(w, req, rec, parts)
	case len(parts) == 1 && parts[0] == "version":
		s.writeRawJSON(w, rec, http.StatusOK, kubeVersion())
	case len(parts) == 1 && parts[0] == "api":
		s.write(w, req, rec, reply{code: http.StatusOK, raw: &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{}}}, mt)
	case len(parts) == 1 && parts[0] == "apis" && wantsAggregated(req):
		s.writeAggregated(w, req, rec)
	case len(parts) == 1 && parts[0] == "apis":
		groups, err := s.groupList(req)
		writeDiscovery(s, w, req, rec, groups, err)
	case len(parts) == 2 && parts[0] == "apis":
		g, err := s.groupDiscovery(req, parts[1])
		writeDiscovery(s, w, req, rec, g, err)
	case len(parts) == 3 && parts[0] == "apis":
		l, err := s.versionDiscovery(req, parts[1], parts[2])
		writeDiscovery(s, w, req, rec, l, err)
	default:
		s.notFound(w, req, rec)
	}
}

// writeDiscovery answers with a discovery document: a 404 when there is none, the error of a failed storage
// read.
func writeDiscovery[T any](s *Server, w http.ResponseWriter, req *http.Request, rec *warnings, doc *T, err error) {
	switch {
	case err != nil:
		s.fail(w, req, rec, storageUnavailable(err))
	case doc == nil:
		s.notFound(w, req, rec)
	default:
		s.write(w, req, rec, reply{code: http.StatusOK, raw: doc}, negotiation.MediaTypeOptions{})
	}
}

// writeRawJSON answers with an indented JSON document, as responsewriters.WriteRawJSON does for /version and for
// an error whose Accept header cannot be satisfied.
func (s *Server) writeRawJSON(w http.ResponseWriter, rec *warnings, code int, v interface{}) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for _, h := range rec.headers() {
		w.Header().Add("Warning", h)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	w.Write(data)
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// compareKubeAware orders versions as Kubernetes does (v1 > v1beta2 > v1beta1 > v1alpha1 > other names).
func compareKubeAware(a, b string) int { return version.CompareKubeAwareVersionStrings(a, b) }

// storageVersionHash is the opaque hash clients use to notice storage version changes.
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

var apiextensionsGroup = metav1.APIGroup{
	Name:             apiextensionsv1.GroupName,
	Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: "apiextensions.k8s.io/v1", Version: "v1"}},
	PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "apiextensions.k8s.io/v1", Version: "v1"},
}

// groupDiscovery answers /apis/<group>: the served versions of established CRDs, newest first.
func (s *Server) groupDiscovery(req *http.Request, group string) (*metav1.APIGroup, error) {
	if group == apiextensionsv1.GroupName {
		g := apiextensionsGroup
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		return &g, nil
	}
	if group == admissionGroup && len(s.admissionResources()) > 0 {
		g := admissionGroupDiscovery
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		return &g, nil
	}
	all, _, err := s.listCRDs(req.Context())
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var versions []metav1.GroupVersionForDiscovery
	for _, crd := range all {
		if crd.Spec.Group != group || !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && !seen[v.Name] {
				seen[v.Name] = true
				versions = append(versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v.Name, Version: v.Name})
			}
		}
	}
	if len(versions) == 0 {
		return nil, nil
	}
	sort.SliceStable(versions, func(i, j int) bool {
		return compareKubeAware(versions[i].Version, versions[j].Version) > 0
	})
	return &metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: group, Versions: versions, PreferredVersion: versions[0]}, nil
}

// groupList answers /apis, which a standalone apiextensions-apiserver leaves to the aggregator; kubectl needs it.
func (s *Server) groupList(req *http.Request) (*metav1.APIGroupList, error) {
	all, _, err := s.listCRDs(req.Context())
	if err != nil {
		return nil, err
	}
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{apiextensionsGroup}}
	if len(s.admissionResources()) > 0 {
		list.Groups = append(list.Groups, admissionGroupDiscovery)
	}
	seen := map[string]bool{}
	var groups []string
	for _, crd := range all {
		if !seen[crd.Spec.Group] {
			seen[crd.Spec.Group] = true
			groups = append(groups, crd.Spec.Group)
		}
	}
	sort.Strings(groups)
	for _, g := range groups {
		if d, err := s.groupDiscovery(req, g); err != nil {
			return nil, err
		} else if d != nil {
			d.TypeMeta = metav1.TypeMeta{}
			list.Groups = append(list.Groups, *d)
		}
	}
	return list, nil
}

var crdResources = []metav1.APIResource{
	{Name: "customresourcedefinitions", SingularName: "customresourcedefinition", Kind: "CustomResourceDefinition",
		Verbs:      metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
		ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"}},
	{Name: "customresourcedefinitions/status", Kind: "CustomResourceDefinition", Verbs: metav1.Verbs{"get", "patch", "update"}},
}

// versionDiscovery answers /apis/<group>/<version>.
func (s *Server) versionDiscovery(req *http.Request, group, ver string) (*metav1.APIResourceList, error) {
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: group + "/" + ver}
	if group == apiextensionsv1.GroupName {
		if ver != "v1" {
			return nil, nil
		}
		list.APIResources = crdResources
		return list, nil
	}
	if res := s.admissionResources(); group == admissionGroup && len(res) > 0 {
		if ver != "v1" {
			return nil, nil
		}
		list.APIResources = res
		return list, nil
	}
	all, _, err := s.listCRDs(req.Context())
	if err != nil {
		return nil, err
	}
	found := false
	for _, crd := range all {
		if crd.Spec.Group != group || !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		served, hash := false, ""
		for _, v := range crd.Spec.Versions {
			if v.Served && v.Name == ver {
				served = true
			}
			if v.Served && v.Storage {
				hash = storageVersionHash(group, v.Name, crd.Spec.Names.Kind)
			}
		}
		if !served {
			continue
		}
		found = true
		verbs := metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
		if apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating) {
			verbs = metav1.Verbs{"delete", "deletecollection", "get", "list", "watch"}
		}
		names := crd.Status.AcceptedNames
		namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: names.Plural, SingularName: names.Singular, Namespaced: namespaced, Kind: names.Kind,
			Verbs: verbs, ShortNames: names.ShortNames, Categories: names.Categories, StorageVersionHash: hash,
		})
		sub, err := apihelpers.GetSubresourcesForVersion(crd, ver)
		if err != nil {
			return nil, err
		}
		if sub != nil && sub.Status != nil {
			list.APIResources = append(list.APIResources, metav1.APIResource{Name: names.Plural + "/status", Namespaced: namespaced, Kind: names.Kind, Verbs: metav1.Verbs{"get", "patch", "update"}})
		}
		if sub != nil && sub.Scale != nil {
			list.APIResources = append(list.APIResources, metav1.APIResource{Group: "autoscaling", Version: "v1", Kind: "Scale", Name: names.Plural + "/scale", Namespaced: namespaced, Verbs: metav1.Verbs{"get", "patch", "update"}})
		}
	}
	if !found {
		return nil, nil
	}
	return list, nil
}

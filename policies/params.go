package policies

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// clusterNamespaces are the namespaces every kube-apiserver makes, labelled with their names as the namespace
// strategy labels every namespace. The engine serves no namespaces: namespaceSelectors match these.
func clusterNamespaces() []*corev1.Namespace {
	var out []*corev1.Namespace
	for _, n := range []string{"default", "kube-node-lease", "kube-public", "kube-system"} {
		ns := &corev1.Namespace{}
		ns.Name = n
		out = append(out, withNameLabel(ns))
	}
	return out
}

// withNameLabel gives ns the kubernetes.io/metadata.name label, as the namespace strategy does.
func withNameLabel(ns *corev1.Namespace) *corev1.Namespace {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
	return ns
}

// addParams adds to set the objects of paramKind that server (the engine) holds, and where they are served:
// a custom resource's CRD says its resource and scope. A kind no CRD serves adds nothing, and the policy gets
// upstream's configuration error for it.
func addParams(set *Set, pk *admissionregistrationv1.ParamKind, server http.Handler) error {
	if pk.APIVersion == "v1" && pk.Kind == "ConfigMap" {
		return nil // the Set's ConfigMaps
	}
	gv, err := schema.ParseGroupVersion(pk.APIVersion)
	if err != nil {
		return nil
	}
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := getJSON(server, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", &crds); err != nil {
		return err
	}
	for _, crd := range crds.Items {
		if crd.Spec.Group != gv.Group || crd.Spec.Names.Kind != pk.Kind {
			continue
		}
		scope := meta.RESTScopeRoot
		if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
			scope = meta.RESTScopeNamespace
		}
		gvr := gv.WithResource(crd.Spec.Names.Plural)
		for _, m := range set.ParamMappings {
			if m.Resource == gvr {
				return nil // another policy's params: already read
			}
		}
		set.ParamMappings = append(set.ParamMappings, meta.RESTMapping{Resource: gvr, GroupVersionKind: gv.WithKind(pk.Kind), Scope: scope})
		var list unstructured.UnstructuredList
		if err := getJSON(server, "/apis/"+gv.String()+"/"+gvr.Resource, &list); err != nil {
			return nil // not served in that version: the policy's own configuration error
		}
		for i := range list.Items {
			set.Params = append(set.Params, &list.Items[i])
		}
	}
	return nil
}

// getJSON reads path from server in process.
func getJSON(server http.Handler, path string, into any) error {
	rec := httptest.NewRecorder()
	server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		return fmt.Errorf("GET %s: %d", path, rec.Code)
	}
	if u, ok := into.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(rec.Body.Bytes())
	}
	return json.Unmarshal(rec.Body.Bytes(), into)
}

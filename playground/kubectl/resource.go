package kubectl

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// info is one object a command works on: cli-runtime's resource.Info.
type info struct {
	mapping   *mapping
	namespace string
	name      string
	// object is the object as read from a file or fetched from the server; nil until fetched.
	object *unstructured.Unstructured
	// source is the file the object came from, "" for objects named on the command line.
	source string
}

// String is Info.String() as kubectl prints it in a few error messages.
func (i *info) String() string {
	basicInfo := fmt.Sprintf("Name: %q, Namespace: %q", i.name, i.namespace)
	if i.mapping != nil {
		basicInfo += "\nResource: " + fmt.Sprintf("%q", i.mapping.gvr.String())
	}
	if i.object != nil {
		basicInfo += "\nObject: " + fmt.Sprintf("%q", i.object.Object)
	}
	return basicInfo
}

// path is the object's URL path, or its collection's when name is empty.
func (m *mapping) path(namespace, name string) string {
	var b strings.Builder
	if m.gvr.Group == "" {
		b.WriteString("/api/" + m.gvr.Version)
	} else {
		b.WriteString("/apis/" + m.gvr.Group + "/" + m.gvr.Version)
	}
	if m.namespaced && namespace != "" {
		b.WriteString("/namespaces/" + namespace)
	}
	b.WriteString("/" + m.gvr.Resource)
	if name != "" {
		b.WriteString("/" + name)
	}
	return b.String()
}

// subresourcePath is the URL path of the object's subresource, or of the object when subresource is empty.
func (m *mapping) subresourcePath(namespace, name, subresource string) string {
	p := m.path(namespace, name)
	if subresource != "" {
		p += "/" + subresource
	}
	return p
}

// getBody is resource.Helper.Get with the given Accept header: the response body as it is.
func (k *kubectl) getBody(m *mapping, namespace, name, subresource, accept string) ([]byte, error) {
	return k.client.call(request{method: "GET", path: m.subresourcePath(namespace, name, subresource), accept: accept,
		resource: m.gvr.GroupResource(), name: name})
}

// get fetches an object (resource.Helper.Get).
func (k *kubectl) get(m *mapping, namespace, name, subresource string) (*unstructured.Unstructured, error) {
	body, err := k.getBody(m, namespace, name, subresource, acceptJSON)
	if err != nil {
		return nil, err
	}
	return decodeObject(body)
}

// getAs fetches one object with the given Accept header, as resource.Info.Get does: when the object is not
// found in a namespace other than default, kubectl asks for the namespace, and reports a missing namespace
// rather than a missing object.
func (k *kubectl) getAs(m *mapping, namespace, name, subresource, accept string) ([]byte, error) {
	body, err := k.getBody(m, namespace, name, subresource, accept)
	if err != nil && apierrors.IsNotFound(err) && namespace != "" && namespace != "default" {
		_, nsErr := k.client.call(request{method: "GET", path: "/api/v1/namespaces/" + namespace, accept: acceptJSON,
			resource: schema.GroupResource{Resource: "namespaces"}, name: namespace})
		if nsErr != nil && apierrors.IsNotFound(nsErr) {
			return nil, nsErr
		}
	}
	return body, err
}

// fetch is resource.Info.Get: the object, with the namespace check of getAs.
func (k *kubectl) fetch(m *mapping, namespace, name, subresource string) (*unstructured.Unstructured, error) {
	body, err := k.getAs(m, namespace, name, subresource, acceptJSON)
	if err != nil {
		return nil, err
	}
	return decodeObject(body)
}

// create POSTs an object (resource.Helper.Create with modify: the resourceVersion is cleared).
func (k *kubectl) create(it *info, fieldManager, directive string, dry dryRun) (*unstructured.Unstructured, error) {
	if it.object.GetResourceVersion() != "" {
		it.object.SetResourceVersion("")
	}
	body, err := k.client.call(request{
		method: "POST", path: it.mapping.path(it.namespace, ""),
		query:       writeQuery(dry, fieldManager, directive),
		accept:      acceptJSON,
		contentType: "application/json",
		body:        encode(it.object.Object),
		resource:    it.mapping.gvr.GroupResource(),
	})
	if err != nil {
		return nil, err
	}
	return decodeObject(body)
}

// writeQuery is the query of a write: dryRun, fieldManager and fieldValidation as resource.Helper sets them.
func writeQuery(dry dryRun, fieldManager, directive string) url.Values {
	q := url.Values{}
	if dry == dryRunServer {
		q.Set("dryRun", "All")
	}
	if fieldManager != "" {
		q.Set("fieldManager", fieldManager)
	}
	if directive != "" {
		q.Set("fieldValidation", directive)
	}
	return q
}

// encode is runtime.Encode with the unstructured JSON scheme: compact JSON and a newline.
func encode(obj map[string]interface{}) []byte {
	data, _ := json.Marshal(obj)
	return append(data, '\n')
}

// decodeObject decodes a server response into an object, numbers as int64 or float64 like kubectl's
// unstructured decoder.
func decodeObject(body []byte) (*unstructured.Unstructured, error) {
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(body, nil, nil)
	if err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o, nil
	case *unstructured.UnstructuredList:
		u := &unstructured.Unstructured{Object: o.Object}
		items := make([]interface{}, len(o.Items))
		for i := range o.Items {
			items[i] = o.Items[i].Object
		}
		u.Object["items"] = items
		return u, nil
	}
	return nil, fmt.Errorf("unexpected object %T", obj)
}

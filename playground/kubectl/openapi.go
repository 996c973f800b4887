package kubectl

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// openAPIClient reads /openapi/v3 as kubectl's cached OpenAPI v3 client does: the index once, then each group
// version's document once, at the hashed URL the index gives.
type openAPIClient struct {
	k *kubectl
	// paths maps "apis/<group>/<version>" (or "api/v1") to its server-relative URL; nil until fetched.
	paths map[string]string
	err   error
	docs  map[string]map[string]interface{}
}

func (k *kubectl) openAPI() *openAPIClient {
	if k.openapi == nil {
		k.openapi = &openAPIClient{k: k, docs: map[string]map[string]interface{}{}}
	}
	return k.openapi
}

// Paths fetches /openapi/v3.
func (o *openAPIClient) Paths() (map[string]string, error) {
	if o.paths != nil || o.err != nil {
		return o.paths, o.err
	}
	body, err := o.k.client.call(request{method: "GET", path: "/openapi/v3", query: timeoutQuery(), accept: acceptAny})
	if err != nil {
		o.err = err
		return nil, err
	}
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &idx); err != nil {
		o.err = err
		return nil, err
	}
	o.paths = map[string]string{}
	for k, v := range idx.Paths {
		o.paths[k] = v.ServerRelativeURL
	}
	return o.paths, nil
}

// gvKey is the index key of a group version.
func gvKey(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// Schema fetches the OpenAPI document of a group version; found is false when the index does not list it.
func (o *openAPIClient) Schema(gv schema.GroupVersion) (doc map[string]interface{}, found bool, err error) {
	paths, err := o.Paths()
	if err != nil {
		return nil, false, err
	}
	key := gvKey(gv)
	if d, ok := o.docs[key]; ok {
		return d, true, nil
	}
	rel, ok := paths[key]
	if !ok {
		return nil, false, nil
	}
	u, err := url.Parse(rel)
	if err != nil {
		return nil, true, err
	}
	q := u.Query()
	q.Set("timeout", "32s")
	body, err := o.k.client.call(request{method: "GET", path: u.Path, query: q, accept: acceptJSON})
	if err != nil {
		return nil, true, fmt.Errorf("failed to fetch openapi schema for %s: %w", key, err)
	}
	var d map[string]interface{}
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, true, fmt.Errorf("failed to parse openapi schema for %s: %w", key, err)
	}
	o.docs[key] = d
	return d, true, nil
}

// patchOperation finds the PATCH operation of a kind in a group version's document, as kubectl's
// query-parameter verifier and patcher do.
func patchOperation(doc map[string]interface{}, gvk schema.GroupVersionKind) map[string]interface{} {
	paths, _ := doc["paths"].(map[string]interface{})
	// Go's map order is random; kubectl ranges over the same map, and every PATCH operation of a kind
	// carries the same parameters, so any match will do. Sorting keeps the playground deterministic.
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, _ := paths[p].(map[string]interface{})
		op, _ := item["patch"].(map[string]interface{})
		if op == nil {
			continue
		}
		ext, _ := op["x-kubernetes-group-version-kind"].(map[string]interface{})
		if ext["group"] == gvk.Group && ext["version"] == gvk.Version && ext["kind"] == gvk.Kind {
			return op
		}
	}
	return nil
}

// supportsFieldValidation is kubectl's QueryParamVerifierV3 for fieldValidation: does the PATCH operation of
// the kind take the parameter?
func (k *kubectl) supportsFieldValidation(gvk schema.GroupVersionKind) (bool, error) {
	doc, found, err := k.openAPI().Schema(gvk.GroupVersion())
	if err != nil {
		return false, err
	}
	if !found {
		// kubectl looks the kind up among the CRDs (a CRD's group version may not be published yet), then
		// asks /openapi/v2. A kind that is neither served nor a CRD fails later, when the builder maps it;
		// and the servers the playground talks to validate fields themselves, so validation passes here.
		k.listCRDsOnce()
		k.fetchOpenAPIV2()
		return true, nil
	}
	op := patchOperation(doc, gvk)
	if op == nil {
		// "Path not found for GVK": kubectl falls back to /openapi/v2, which (for a kind the server does not
		// serve) leaves validation to the server as well.
		k.fetchOpenAPIV2()
		return true, nil
	}
	params, _ := op["parameters"].([]interface{})
	for _, p := range params {
		pm, _ := p.(map[string]interface{})
		if pm["name"] == "fieldValidation" && pm["in"] == "query" {
			return true, nil
		}
	}
	return false, nil
}

// supportsStrategicMergePatch is the patcher's gvkSupportsPatchOpenAPIV3: does the kind's PATCH operation
// accept a strategic merge patch? Built-in kinds do; custom resources do not.
func (k *kubectl) supportsStrategicMergePatch(gvk schema.GroupVersionKind) bool {
	doc, found, err := k.openAPI().Schema(gvk.GroupVersion())
	if err != nil || !found {
		return false
	}
	op := patchOperation(doc, gvk)
	if op == nil {
		return false
	}
	rb, _ := op["requestBody"].(map[string]interface{})
	content, _ := rb["content"].(map[string]interface{})
	_, ok := content["application/strategic-merge-patch+json"]
	return ok
}

// listCRDsOnce is the CRD finder of kubectl's field validation check: one list of the CRDs per command.
func (k *kubectl) listCRDsOnce() {
	if k.crdsListed {
		return
	}
	k.crdsListed = true
	_, _ = k.client.do(request{method: "GET", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", accept: acceptJSON})
}

// fetchOpenAPIV2 requests /openapi/v2 as kubectl's OpenAPI v2 getter does; the answer is not needed.
func (k *kubectl) fetchOpenAPIV2() {
	if k.openapiV2Fetched {
		return
	}
	k.openapiV2Fetched = true
	_, _ = k.client.do(request{method: "GET", path: "/openapi/v2", query: timeoutQuery(), accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
}

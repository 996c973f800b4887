package apiserver

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"crdplay/engine/internal/openapi"
)

// openAPICache keeps what kube-apiserver's OpenAPI controllers keep (apiextensions-apiserver's
// controller/openapi and controller/openapiv3): each CRD's documents, built again only when the CRD changes
// (uid or resourceVersion), and the published /openapi/v2 and per-group-version /openapi/v3 documents, merged
// again only when a CRD they come from changes. The engine has no informer to drive a controller, so a request
// finds what changed by comparing the CRDs it lists; one lock makes concurrent requests wait for one build
// instead of each building the same documents.
type openAPICache struct {
	mu   sync.Mutex
	crds map[string]*crdDocs // CRD name ->
	v2   mergedDoc
	v3   map[string]mergedDoc // group/version ->

	// builds counts the per-CRD documents built (one per CRD for v2, one per CRD and version for v3).
	builds int
}

// crdDocs are the documents of one CRD at one uid and resourceVersion; nil where the build failed, which
// leaves the CRD out as upstream does.
type crdDocs struct {
	uid     types.UID
	rv      string
	v2Built bool
	v2      *spec.Swagger
	v3      map[string]*spec3.OpenAPI // version ->
}

// mergedDoc is a published document in JSON, with the CRDs it was merged from (key) and its content hash.
type mergedDoc struct {
	key  string
	data []byte
	etag string
}

// docsOf returns the cached documents of crd, fresh ones when it changed. Callers hold c.mu.
func (c *openAPICache) docsOf(crd *apiextensionsv1.CustomResourceDefinition) *crdDocs {
	if c.crds == nil {
		c.crds = map[string]*crdDocs{}
	}
	d := c.crds[crd.Name]
	if d == nil || d.uid != crd.UID || d.rv != crd.ResourceVersion {
		d = &crdDocs{uid: crd.UID, rv: crd.ResourceVersion, v3: map[string]*spec3.OpenAPI{}}
		c.crds[crd.Name] = d
	}
	return d
}

// forget drops the documents of CRDs no longer listed, and those of group/versions no longer served.
func (c *openAPICache) forget(all []*apiextensionsv1.CustomResourceDefinition) {
	names := make(map[string]bool, len(all))
	served := map[string]bool{}
	for _, crd := range all {
		names[crd.Name] = true
		for _, v := range crd.Spec.Versions {
			served[crd.Spec.Group+"/"+v.Name] = served[crd.Spec.Group+"/"+v.Name] || v.Served
		}
	}
	for name := range c.crds {
		if !names[name] {
			delete(c.crds, name)
		}
	}
	for gv := range c.v3 {
		if !served[gv] {
			delete(c.v3, gv)
		}
	}
}

// docKey names the CRDs a merged document comes from, at their uid and resourceVersion.
func docKey(crds []*apiextensionsv1.CustomResourceDefinition) string {
	var b strings.Builder
	for _, crd := range crds {
		b.WriteString(crd.Name)
		b.WriteByte(' ')
		b.WriteString(string(crd.UID))
		b.WriteByte(' ')
		b.WriteString(crd.ResourceVersion)
		b.WriteByte('\n')
	}
	return b.String()
}

// openAPIV2 is /openapi/v2 in JSON: the static document with every established CRD's served versions merged in.
func (s *Server) openAPIV2(ctx context.Context) (mergedDoc, error) {
	all, _, err := s.listCRDs(ctx)
	if err != nil {
		return mergedDoc{}, storageUnavailable(err)
	}
	var established []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range all {
		if apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			established = append(established, crd)
		}
	}
	key := docKey(established)
	c := &s.openapi
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.v2.data != nil && c.v2.key == key {
		return c.v2, nil
	}
	c.forget(all)
	var perCRD []*spec.Swagger
	for _, crd := range established {
		d := c.docsOf(crd)
		if !d.v2Built {
			d.v2, d.v2Built = buildCRDV2(crd), true
			c.builds++
		}
		if d.v2 != nil {
			perCRD = append(perCRD, d.v2)
		}
	}
	sw, err := openapi.PublishedV2(perCRD)
	if err != nil {
		return mergedDoc{}, err
	}
	// The v2 handler serves the document's own encoding, which unlike encoding/json leaves <, > and & as they are.
	data, err := sw.MarshalJSON()
	if err != nil {
		return mergedDoc{}, err
	}
	c.v2 = mergedDoc{key: key, data: data, etag: etag(data)}
	return c.v2, nil
}

// buildCRDV2 is one CRD's part of /openapi/v2, nil when a version's document fails (upstream drops the CRD).
func buildCRDV2(crd *apiextensionsv1.CustomResourceDefinition) *spec.Swagger {
	var versions []*spec.Swagger
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		doc, err := openapi.BuildV2(crd, v.Name, publishedV2)
		if err != nil {
			return nil
		}
		versions = append(versions, doc)
	}
	merged, err := openapi.CRDV2(versions)
	if err != nil {
		return nil
	}
	return merged
}

// openAPIV3 is the /openapi/v3 document of one group/version served by established CRDs, built from those
// CRDs only; ok is false when no established CRD serves it.
func (s *Server) openAPIV3(all []*apiextensionsv1.CustomResourceDefinition, gv string) (doc mergedDoc, ok bool) {
	group, version, found := strings.Cut(gv, "/")
	if !found {
		return mergedDoc{}, false
	}
	var serving []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range all {
		if crd.Spec.Group != group || !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && v.Name == version {
				serving = append(serving, crd)
				break
			}
		}
	}
	if len(serving) == 0 {
		return mergedDoc{}, false
	}
	key := docKey(serving)
	c := &s.openapi
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.v3[gv]; ok && d.key == key {
		return d, d.data != nil
	}
	c.forget(all)
	var docs []*spec3.OpenAPI
	for _, crd := range serving {
		d := c.docsOf(crd)
		v3, built := d.v3[version]
		if !built {
			v3, _ = openapi.BuildV3WithOptions(crd, version, publishedV3) // nil on error: upstream leaves it out
			d.v3[version] = v3
			c.builds++
		}
		if v3 != nil {
			docs = append(docs, v3)
		}
	}
	if c.v3 == nil {
		c.v3 = map[string]mergedDoc{}
	}
	doc = mergedDoc{key: key}
	if merged := mergeV3(docs); merged != nil {
		if data, err := json.Marshal(merged); err == nil {
			doc.data, doc.etag = data, etag(data)
		}
	}
	c.v3[gv] = doc
	return doc, doc.data != nil
}

// mergeV3 merges the documents of the CRDs serving one group/version, as kube-apiserver's per-group-version
// OpenAPI v3 endpoint does, without modifying them.
func mergeV3(docs []*spec3.OpenAPI) *spec3.OpenAPI {
	if len(docs) == 0 {
		return nil
	}
	merged := *docs[0]
	merged.Paths = &spec3.Paths{Paths: map[string]*spec3.Path{}}
	if docs[0].Paths != nil {
		merged.Paths.VendorExtensible = docs[0].Paths.VendorExtensible
	}
	merged.Components = &spec3.Components{Schemas: map[string]*spec.Schema{}}
	if docs[0].Components != nil {
		c := *docs[0].Components
		c.Schemas = map[string]*spec.Schema{}
		merged.Components = &c
	}
	for _, doc := range docs {
		if doc.Paths != nil {
			for p, item := range doc.Paths.Paths {
				merged.Paths.Paths[p] = item
			}
		}
		if doc.Components != nil {
			for name, sch := range doc.Components.Schemas {
				merged.Components.Schemas[name] = sch
			}
		}
	}
	return &merged
}

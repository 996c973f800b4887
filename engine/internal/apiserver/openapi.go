package apiserver

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"crdplay/engine/internal/openapi"
)

// publishedOptions are the variants kube-apiserver publishes: v3 with selectable fields, v2 shaped for v2.
var (
	publishedV3 = openapi.Options{IncludeSelectableFields: true}
	publishedV2 = openapi.Options{V2: true, IncludeSelectableFields: true}
)

// servedByGroupVersion lists the established CRDs serving each group/version, in name order.
func (s *Server) servedByGroupVersion(req *http.Request) (map[string][]*apiextensionsv1.CustomResourceDefinition, error) {
	all, _, err := s.listCRDs(req.Context())
	if err != nil {
		return nil, err
	}
	out := map[string][]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range all {
		if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				gv := crd.Spec.Group + "/" + v.Name
				out[gv] = append(out[gv], crd)
			}
		}
	}
	return out, nil
}

// openAPIV3Doc merges the documents of the CRDs serving one group/version, as kube-apiserver's per-group-version
// OpenAPI v3 endpoint does.
func openAPIV3Doc(gv string, crds []*apiextensionsv1.CustomResourceDefinition) (*spec3.OpenAPI, error) {
	version := gv[strings.LastIndex(gv, "/")+1:]
	var merged *spec3.OpenAPI
	for _, crd := range crds {
		doc, err := openapi.BuildV3WithOptions(crd, version, publishedV3)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", crd.Name, err)
		}
		if merged == nil {
			merged = doc
			continue
		}
		if doc.Paths != nil {
			if merged.Paths == nil {
				merged.Paths = doc.Paths
			} else {
				for p, item := range doc.Paths.Paths {
					merged.Paths.Paths[p] = item
				}
			}
		}
		if doc.Components != nil {
			if merged.Components == nil {
				merged.Components = &spec3.Components{}
			}
			if merged.Components.Schemas == nil {
				merged.Components.Schemas = map[string]*spec.Schema{}
			}
			for name, sch := range doc.Components.Schemas {
				merged.Components.Schemas[name] = sch
			}
		}
	}
	return merged, nil
}

// etag is the content hash kube-openapi puts in serverRelativeURL.
func etag(data []byte) string { return fmt.Sprintf("%X", sha512.Sum512(data)) }

// openAPIStart stands for the time the documents were last built, which kube-openapi sends as Last-Modified.
var openAPIStart = time.Now()

// v3Documents are the /openapi/v3 documents by index path: the static ones of apiextensions.k8s.io and
// /version, and one per group/version served by established CRDs.
func (s *Server) v3Documents(req *http.Request) (map[string][]byte, error) {
	byGV, err := s.servedByGroupVersion(req)
	if err != nil {
		return nil, err
	}
	docs := map[string][]byte{}
	for _, p := range openapi.StaticV3Paths() {
		docs[p], _ = openapi.StaticV3(p)
	}
	for gv, crds := range byGV {
		doc, err := openAPIV3Doc(gv, crds)
		if err != nil {
			continue // as upstream, a CRD whose document fails is left out
		}
		data, err := json.Marshal(doc)
		if err != nil {
			continue
		}
		docs["apis/"+gv] = data
	}
	return docs, nil
}

// serveOpenAPI answers /openapi/v2, /openapi/v3 and /openapi/v3/<path> as kube-openapi's handlers do, in JSON
// (the protobuf forms are not offered: a client asking only for them gets 406).
func (s *Server) serveOpenAPI(w http.ResponseWriter, req *http.Request, rec *warnings, parts []string) {
	for _, h := range rec.headers() {
		w.Header().Add("Warning", h)
	}
	w.Header().Set("Cache-Control", "no-cache, private")
	switch {
	case len(parts) == 2 && parts[1] == "v3":
		docs, err := s.v3Documents(req)
		if err != nil {
			s.fail(w, req, rec, storageUnavailable(err))
			return
		}
		type entry struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		}
		index := struct {
			Paths map[string]entry `json:"paths"`
		}{Paths: map[string]entry{}}
		for p, data := range docs {
			index.Paths[p] = entry{"/openapi/v3/" + p + "?hash=" + etag(data)}
		}
		data, err := json.Marshal(index)
		if err != nil {
			s.fail(w, req, rec, err)
			return
		}
		w.Header().Set("Etag", strconv.Quote(etag(data)))
		w.Header().Set("Content-Type", "application/json")
		http.ServeContent(w, req, "/openapi/v3", openAPIStart, bytes.NewReader(data))
	case len(parts) > 2 && parts[1] == "v3":
		docs, err := s.v3Documents(req)
		if err != nil {
			s.fail(w, req, rec, storageUnavailable(err))
			return
		}
		w.Header().Add("Vary", "Accept")
		if !acceptsJSON(req) {
			w.WriteHeader(http.StatusNotAcceptable)
			return
		}
		p := strings.Join(parts[2:], "/")
		data, ok := docs[p]
		if !ok {
			return // kube-openapi answers an unknown group with an empty 200
		}
		tag := etag(data)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Etag", strconv.Quote(tag))
		if hash := req.URL.Query().Get("hash"); hash != "" {
			if hash != tag {
				http.Redirect(w, req, "/openapi/v3/"+p+"?hash="+tag, http.StatusMovedPermanently)
				return
			}
			w.Header().Set("Cache-Control", "public, immutable")
			w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).Format(time.RFC1123))
		}
		http.ServeContent(w, req, "", openAPIStart, bytes.NewReader(data))
	case len(parts) == 2 && parts[1] == "v2":
		sw, err := s.publishedV2(req)
		if err != nil {
			s.fail(w, req, rec, err)
			return
		}
		w.Header().Add("Vary", "Accept")
		if !acceptsJSON(req) {
			w.WriteHeader(http.StatusNotAcceptable)
			return
		}
		// The v2 handler serves the document's own encoding, which unlike encoding/json leaves <, > and & as
		// they are.
		data, err := sw.MarshalJSON()
		if err != nil {
			s.fail(w, req, rec, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Etag", strconv.Quote(etag(data)))
		http.ServeContent(w, req, "/openapi/v2", openAPIStart, bytes.NewReader(data))
	default:
		s.notFound(w, req, rec)
	}
}

// acceptsJSON negotiates as kube-openapi does for a server that only has JSON: an Accept clause for
// application/json or a wildcard (not refused with q=0) selects it; an empty Accept means */*.
func acceptsJSON(req *http.Request) bool {
	accept := req.Header.Get("Accept")
	if accept == "" {
		return true
	}
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		if q, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
				continue
			}
		}
		switch mt {
		case "application/json", "application/*", "*/*":
			return true
		}
	}
	return false
}

// publishedV2 is /openapi/v2: the static document with every established CRD's served versions merged in.
func (s *Server) publishedV2(req *http.Request) (*spec.Swagger, error) {
	all, _, err := s.listCRDs(req.Context())
	if err != nil {
		return nil, storageUnavailable(err)
	}
	var perCRD [][]*spec.Swagger
	for _, crd := range all {
		if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		var versions []*spec.Swagger
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			doc, err := openapi.BuildV2(crd, v.Name, publishedV2)
			if err != nil {
				versions = nil // upstream drops the CRD whose document fails
				break
			}
			versions = append(versions, doc)
		}
		if versions != nil {
			perCRD = append(perCRD, versions)
		}
	}
	return openapi.PublishedV2(perCRD)
}

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

	"crdplay/engine/internal/openapi"
)

// publishedOptions are the variants kube-apiserver publishes: v3 with selectable fields, v2 shaped for v2.
var (
	publishedV3 = openapi.Options{IncludeSelectableFields: true}
	publishedV2 = openapi.Options{V2: true, IncludeSelectableFields: true}
)

// etag is the content hash kube-openapi puts in serverRelativeURL.
func etag(data []byte) string { return fmt.Sprintf("%X", sha512.Sum512(data)) }

// openAPIStart stands for the time the documents were last built, which kube-openapi sends as Last-Modified.
var openAPIStart = time.Now()

// v3Paths are the /openapi/v3 index paths: the static documents of apiextensions.k8s.io and /version, and one
// per group/version served by established CRDs.
func v3Paths(all []*apiextensionsv1.CustomResourceDefinition) []string {
	paths := openapi.StaticV3Paths()
	seen := map[string]bool{}
	for _, crd := range all {
		if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if gv := crd.Spec.Group + "/" + v.Name; v.Served && !seen[gv] {
				seen[gv] = true
				paths = append(paths, "apis/"+gv)
			}
		}
	}
	return paths
}

// v3Document is the /openapi/v3 document at an index path and its content hash.
func (s *Server) v3Document(all []*apiextensionsv1.CustomResourceDefinition, p string) (data []byte, tag string, ok bool) {
	if data, ok := openapi.StaticV3(p); ok {
		return data, etag(data), true
	}
	if p == admissionOpenAPIPath {
		if g, ok := s.cfg.Admission.(groupServer); ok {
			data := g.OpenAPIV3()
			return data, etag(data), true
		}
	}
	gv, isGroup := strings.CutPrefix(p, "apis/")
	if !isGroup {
		return nil, "", false
	}
	doc, ok := s.openAPIV3(all, gv)
	return doc.data, doc.etag, ok
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
		all, _, err := s.listCRDs(req.Context())
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
		paths := v3Paths(all)
		if _, ok := s.cfg.Admission.(groupServer); ok {
			paths = append(paths, admissionOpenAPIPath)
		}
		for _, p := range paths {
			if _, tag, ok := s.v3Document(all, p); ok {
				index.Paths[p] = entry{"/openapi/v3/" + p + "?hash=" + tag}
			}
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
		all, _, err := s.listCRDs(req.Context())
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
		data, tag, ok := s.v3Document(all, p)
		if !ok {
			return // kube-openapi answers an unknown group with an empty 200
		}
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
		doc, err := s.openAPIV2(req.Context())
		if err != nil {
			s.fail(w, req, rec, err)
			return
		}
		w.Header().Add("Vary", "Accept")
		if !acceptsJSON(req) {
			w.WriteHeader(http.StatusNotAcceptable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Etag", strconv.Quote(doc.etag))
		http.ServeContent(w, req, "/openapi/v2", openAPIStart, bytes.NewReader(doc.data))
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

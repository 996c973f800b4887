package apiserver

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

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

// serveOpenAPI answers /openapi/v2, /openapi/v3 and /openapi/v3/apis/<group>/<version>.
func (s *Server) serveOpenAPI(w http.ResponseWriter, req *http.Request, rec *warnings, parts []string) {
	byGV, err := s.servedByGroupVersion(req)
	if err != nil {
		s.fail(w, req, rec, storageUnavailable(err))
		return
	}
	writeRaw := func(v interface{}) {
		data, err := json.Marshal(v)
		if err != nil {
			s.fail(w, req, rec, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Etag", `"`+etag(data)+`"`)
		w.WriteHeader(http.StatusOK)
		w.Write(data)
	}
	switch {
	case len(parts) == 2 && parts[1] == "v3":
		type entry struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		}
		index := map[string]map[string]entry{"paths": {}}
		gvs := make([]string, 0, len(byGV))
		for gv := range byGV {
			gvs = append(gvs, gv)
		}
		sort.Strings(gvs)
		for _, gv := range gvs {
			doc, err := openAPIV3Doc(gv, byGV[gv])
			if err != nil {
				continue
			}
			data, _ := json.Marshal(doc)
			index["paths"]["apis/"+gv] = entry{"/openapi/v3/apis/" + gv + "?hash=" + etag(data)}
		}
		writeRaw(index)
	case len(parts) == 5 && parts[1] == "v3" && parts[2] == "apis":
		gv := parts[3] + "/" + parts[4]
		crds := byGV[gv]
		if len(crds) == 0 {
			s.notFound(w, req, rec)
			return
		}
		doc, err := openAPIV3Doc(gv, crds)
		if err != nil {
			s.fail(w, req, rec, err)
			return
		}
		writeRaw(doc)
	case len(parts) == 2 && parts[1] == "v2":
		sw := &spec.Swagger{SwaggerProps: spec.SwaggerProps{
			Swagger: "2.0", Info: &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: kubeVersion.GitVersion}},
			Paths: &spec.Paths{Paths: map[string]spec.PathItem{}}, Definitions: spec.Definitions{},
		}}
		for _, crds := range byGV {
			for _, crd := range crds {
				for _, v := range crd.Spec.Versions {
					if !v.Served {
						continue
					}
					doc, err := openapi.BuildV2(crd, v.Name, publishedV2)
					if err != nil {
						continue
					}
					if doc.Paths != nil {
						for p, item := range doc.Paths.Paths {
							sw.Paths.Paths[p] = item
						}
					}
					for name, d := range doc.Definitions {
						sw.Definitions[name] = d
					}
				}
			}
		}
		writeRaw(sw)
	default:
		s.notFound(w, req, rec)
	}
}

package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/request"
)

var crdGR = schema.GroupResource{Group: apiextensionsv1.GroupName, Resource: "customresourcedefinitions"}
var crdGVK = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// crdRequest is one request for customresourcedefinitions.
type crdRequest struct {
	s    *Server
	w    http.ResponseWriter
	req  *http.Request
	rec  *warnings
	info *request.RequestInfo
	mt   negotiation.MediaTypeOptions
}

// serveCRD routes a request for customresourcedefinitions (and their /status) to its verb, and answers with
// the result in the negotiated form.
func (s *Server) serveCRD(w http.ResponseWriter, req *http.Request, rec *warnings, info *request.RequestInfo) {
	r := &crdRequest{s: s, w: w, req: req, rec: rec, info: info}
	if info.APIVersion != "v1" || info.Namespace != "" {
		s.notFound(w, req, rec)
		return
	}
	if err := crdRouteError(req, info); err != nil && crdRouted(info) {
		s.fail(w, req, rec, err)
		return
	}
	mt, _, err := negotiation.NegotiateOutputMediaType(req, outputSerializers{}, restrictions{table: true})
	if err != nil {
		s.fail(w, req, rec, err)
		return
	}
	r.mt = mt
	var res reply
	switch {
	case info.Subresource == "" && info.Verb == "create":
		res, err = r.create()
	case info.Subresource == "" && (info.Verb == "list" || info.Verb == "watch"):
		res, err = r.list()
	case info.Verb == "get" && (info.Subresource == "" || info.Subresource == "status"):
		res, err = r.get()
	case info.Verb == "update" && (info.Subresource == "" || info.Subresource == "status"):
		res, err = r.update()
	case info.Verb == "patch" && (info.Subresource == "" || info.Subresource == "status"):
		res, err = r.patch()
	case info.Subresource == "" && info.Verb == "delete":
		res, err = r.delete()
	case info.Subresource == "" && info.Verb == "deletecollection":
		res, err = r.deleteCollection()
	case info.Subresource == "":
		err = apierrors.NewMethodNotSupported(crdGR, info.Verb)
	default:
		err = apierrors.NewNotFound(crdGR, info.Name)
	}
	if err == errHandled {
		return
	}
	if err != nil {
		s.fail(w, req, rec, err)
		return
	}
	if res.obj != nil {
		obj, err := transform(req.Context(), req, mt, res.obj, crdTableConvertor{}, crdGVK.GroupVersion(), unstructuredNop{})
		if err != nil {
			s.fail(w, req, rec, err)
			return
		}
		res.obj = obj
	}
	s.write(w, req, rec, res, mt)
}

func (r *crdRequest) get() (reply, error) {
	crd, err := r.s.readCRDShared(r.req.Context(), r.info.Name)
	if err != nil {
		return reply{}, err
	}
	return reply{code: http.StatusOK, obj: crd}, nil
}

// warn reports the warnings of a CRD decode, patch or apply that succeeded, and passes its result on.
func (r *crdRequest) warn(crd *apiextensionsv1.CustomResourceDefinition, warns []string, err error) (*apiextensionsv1.CustomResourceDefinition, error) {
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		r.rec.AddWarning("", w)
	}
	return crd, nil
}

// unstructuredNop converts objects that are already in the only version served (apiextensions.k8s.io/v1).
type unstructuredNop struct{}

func (unstructuredNop) Convert(in, out, _ interface{}) error {
	ui, ok1 := in.(*unstructured.Unstructured)
	uo, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("unsupported conversion %T to %T", in, out)
	}
	uo.Object = ui.DeepCopy().Object
	return nil
}
func (unstructuredNop) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in.DeepCopyObject(), nil
}
func (unstructuredNop) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// encodedSpec is the JSON of a CRD's spec as stored, kept beside the decoded spec it reads back as (whose
// versions' array identifies it): answers that carry the CRD (a create's 201, the GET that follows the
// controllers) encode the rest of it and reuse these bytes, as encoding and decoding again gives the same JSON.
// Encoding a large CRD's spec is most of its answer's time: JSONSchemaProps' nested MarshalJSON methods make
// every level compact the levels below it again.
type encodedSpec struct {
	versions *apiextensionsv1.CustomResourceDefinitionVersion
	spec     apiextensionsv1.CustomResourceDefinitionSpec
	json     []byte
}

// rememberSpec keeps spec's JSON for the answers that carry crd, whose spec must be the decode of those bytes.
func (s *Server) rememberSpec(crd *apiextensionsv1.CustomResourceDefinition, spec []byte) {
	if len(crd.Spec.Versions) == 0 {
		return
	}
	s.specJSON.Store(crd.Name, &encodedSpec{versions: &crd.Spec.Versions[0], spec: crd.Spec, json: spec})
}

// rememberStoredSpec is rememberSpec for a CRD just decoded from data, its stored bytes.
func (s *Server) rememberStoredSpec(crd *apiextensionsv1.CustomResourceDefinition, data []byte) {
	if spec, ok := storedSpec(crd, data); ok {
		s.rememberSpec(crd, spec)
	}
}

// storedSpec finds the spec in data, a CRD's stored JSON (encodeCRD's), of which crd is the decode: the bytes
// between its metadata and its status, which must be crd's encoded as they start and end.
func storedSpec(crd *apiextensionsv1.CustomResourceDefinition, data []byte) ([]byte, bool) {
	meta, status, err := encodeMetaAndStatus(crd)
	if err != nil {
		return nil, false
	}
	const specKey, statusKey = `,"spec":`, `,"status":`
	head := len(crdJSONStart) + len(meta) + len(specKey)
	tail := len(statusKey) + len(status) + len(`}`)
	if len(data) < head+tail || string(data[:len(crdJSONStart)]) != crdJSONStart ||
		!bytes.Equal(data[len(crdJSONStart):head-len(specKey)], meta) || string(data[head-len(specKey):head]) != specKey ||
		string(data[len(data)-tail:len(data)-tail+len(statusKey)]) != statusKey ||
		!bytes.Equal(data[len(data)-tail+len(statusKey):len(data)-1], status) || data[len(data)-1] != '}' {
		return nil, false
	}
	return data[head : len(data)-tail], true
}

// zeroSpecJSON is how json.Marshal writes an empty spec, in place of which marshalCRD puts the stored one.
var zeroSpecJSON = func() []byte {
	b, _ := json.Marshal(&apiextensionsv1.CustomResourceDefinitionSpec{})
	return []byte(`,"spec":` + string(b) + `,"status":`)
}()

// marshalCRD is json.Marshal of crd, with the spec's JSON kept by rememberSpec when crd's spec is the one
// kept; ok is false when it is not (the caller encodes crd itself).
func (s *Server) marshalCRD(crd *apiextensionsv1.CustomResourceDefinition) (out []byte, ok bool) {
	v, found := s.specJSON.Load(crd.Name)
	if !found || len(crd.Spec.Versions) == 0 {
		return nil, false
	}
	e := v.(*encodedSpec)
	if e.versions != &crd.Spec.Versions[0] || !sameSpec(&e.spec, &crd.Spec) {
		return nil, false
	}
	c := *crd
	c.Spec = apiextensionsv1.CustomResourceDefinitionSpec{}
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, false
	}
	// Metadata and status hold no such text outside strings, where every quote is escaped.
	i := bytes.Index(b, zeroSpecJSON)
	if i < 0 || bytes.LastIndex(b, zeroSpecJSON) != i {
		return nil, false
	}
	out = make([]byte, 0, len(b)+len(e.json))
	out = append(append(append(append(out, b[:i]...), `,"spec":`...), e.json...), b[i+len(zeroSpecJSON)-len(`,"status":`):]...)
	return out, true
}

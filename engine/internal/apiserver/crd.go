package apiserver

import (
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

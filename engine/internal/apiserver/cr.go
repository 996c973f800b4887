package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"

	"crdplay/engine/storage"
)

// crRequest is one request for a custom resource, with everything resolved.
type crRequest struct {
	s    *Server
	w    http.ResponseWriter
	req  *http.Request
	rec  *warnings
	info *request.RequestInfo
	ci   *crdInfo
	vi   *versionInfo
	mt   negotiation.MediaTypeOptions

	terminating bool
}

// serveCustomResource routes a request for a custom resource (and its /status and /scale) to its verb, once
// the CRD serving it is found, and answers with the result in the negotiated form.
func (s *Server) serveCustomResource(w http.ResponseWriter, req *http.Request, rec *warnings, info *request.RequestInfo) {
	ctx := req.Context()
	crd, ci, vi, err := s.servedVersion(ctx, info)
	if err != nil {
		s.fail(w, req, rec, err)
		return
	}
	if vi == nil {
		s.notFound(w, req, rec)
		return
	}
	for _, msg := range vi.warnings {
		warning.AddWarning(ctx, "", msg)
	}
	r := &crRequest{s: s, w: w, req: req, rec: rec, info: info, ci: ci, vi: vi,
		terminating: !crd.DeletionTimestamp.IsZero() || apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating)}
	// As the CRD handler does, the route is chosen before the answer's media type is negotiated: an unknown
	// subresource is a 404 whatever the Accept header, and the PATCH handler checks the Content-Type (415)
	// before it negotiates (406).
	var serve func() (reply, error)
	switch {
	case info.Subresource == "status" && vi.status != nil:
		serve = r.serveStatus
	case info.Subresource == "scale" && vi.subresources != nil && vi.subresources.Scale != nil:
		serve = r.serveScale
	case info.Subresource == "":
		serve = r.serveMain
	default:
		r.fail(apierrors.NewNotFound(r.gr(), info.Name))
		return
	}
	if info.Verb == "patch" && !slices.Contains(crPatchTypes, string(patchType(req.Header.Get("Content-Type")))) {
		r.fail(negotiation.NewUnsupportedMediaTypeError(crPatchTypes))
		return
	}
	mt, _, err := negotiation.NegotiateOutputMediaType(req, outputSerializers{}, restrictions{table: true})
	if err != nil {
		r.fail(err)
		return
	}
	r.mt = mt

	result, err := serve()
	if err == errHandled {
		return
	}
	if err != nil {
		r.fail(err)
		return
	}
	r.respond(result)
}

// servedVersion finds what serves a custom resource request: the CRD, its serving state and that of the
// request's version. No versionInfo and no error means that nothing serves the path: the CRD or the version
// does not exist, is not served, is of the other scope, or has no accepted names yet.
func (s *Server) servedVersion(ctx context.Context, info *request.RequestInfo) (*apiextensionsv1.CustomResourceDefinition, *crdInfo, *versionInfo, error) {
	crd, err := s.getCRDShared(ctx, info.Resource+"."+info.APIGroup)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, nil, nil, nil
		}
		return nil, nil, nil, storageUnavailable(err)
	}
	namespacedCRD, namespacedReq := crd.Spec.Scope == apiextensionsv1.NamespaceScoped, info.Namespace != ""
	if !namespacedCRD && namespacedReq {
		return nil, nil, nil, nil
	}
	if namespacedCRD && !namespacedReq && info.Verb != "list" && info.Verb != "watch" {
		return nil, nil, nil, nil
	}
	if !apihelpers.HasServedCRDVersion(crd, info.APIVersion) {
		return nil, nil, nil, nil
	}
	if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) && !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		return nil, nil, nil, nil
	}
	ci, err := s.servingInfo(crd)
	if err != nil {
		return nil, nil, nil, apierrors.NewInternalError(fmt.Errorf("error resolving resource"))
	}
	return crd, ci, ci.versions[info.APIVersion], nil
}

func (r *crRequest) fail(err error) { r.s.fail(r.w, r.req, r.rec, err) }

func (r *crRequest) respond(res reply) {
	if res.obj != nil && res.raw == nil {
		var table rest.TableConvertor = r.vi.table
		if r.info.Subresource == "scale" {
			table = r.vi.scaleTable
		}
		if table == nil {
			table = rest.NewDefaultTableConvertor(r.gr())
		}
		obj, err := transform(r.req.Context(), r.req, r.mt, res.obj, table, r.vi.kind.GroupVersion(), r.ci.safeConverter)
		if err != nil {
			r.fail(err)
			return
		}
		res.obj = obj
	}
	r.s.write(r.w, r.req, r.rec, res, r.mt)
}

// gr is the qualified resource named in errors.
func (r *crRequest) gr() schema.GroupResource {
	return schema.GroupResource{Group: r.ci.crd.Spec.Group, Resource: r.ci.crd.Status.AcceptedNames.Plural}
}

func (r *crRequest) serveMain() (reply, error) {
	switch r.info.Verb {
	case "get":
		return r.get()
	case "list":
		return r.list()
	case "create":
		return r.create()
	case "update":
		return r.update(r.vi.strategy, r.vi.fieldManager)
	case "patch":
		return r.patch(r.vi.strategy, r.vi.fieldManager)
	case "delete":
		return r.delete()
	case "deletecollection":
		return r.deleteCollection()
	case "watch":
		r.watch()
		return reply{}, errHandled
	}
	return reply{}, apierrors.NewMethodNotSupported(r.gr(), r.info.Verb)
}

func (r *crRequest) serveStatus() (reply, error) {
	switch r.info.Verb {
	case "get":
		return r.get()
	case "update":
		return r.update(r.vi.status, r.vi.statusFM)
	case "patch":
		return r.patch(r.vi.status, r.vi.statusFM)
	}
	return reply{}, apierrors.NewMethodNotSupported(r.gr(), r.info.Verb)
}

func (r *crRequest) get() (reply, error) {
	opts := metav1.GetOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.req.URL.Query(), metav1.SchemeGroupVersion, &opts); err != nil {
		return reply{}, apierrors.NewBadRequest(err.Error())
	}
	u, err := r.getObject(r.req.Context(), r.info.Namespace, r.info.Name)
	if err != nil {
		return reply{}, err
	}
	return reply{code: http.StatusOK, obj: u}, nil
}

package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"

	"crdplay/engine/internal/conversion"
	"crdplay/engine/storage"
)

// Config is what the engine's front door passes in.
type Config struct {
	Storage         storage.Interface
	Webhook         WebhookFunc
	Now             func() time.Time
	MaxRequestBytes int64
	// Admission is the admission chain writes go through (admission.go); nil for none. It may implement
	// admission.MutationInterface, admission.ValidationInterface or both.
	Admission admission.Interface
}

// WebhookFunc carries a ConversionReview to a webhook; see conversion.WebhookFunc.
type WebhookFunc = conversion.WebhookFunc

// Server serves the API.
type Server struct {
	cfg     Config
	reqInfo *request.RequestInfoFactory

	// mu serialises writes to CRDs, which run the naming and establishing "controllers" synchronously.
	mu      sync.Mutex
	infos   sync.Map // CRD name -> *crdInfo, valid for the CRD's uid and resourceVersion
	decoded sync.Map // CRD name -> *CustomResourceDefinition as last decoded, see getCRDShared
	// specJSON keeps the stored JSON of CRDs' specs for the answers that carry them (marshalCRD).
	specJSON sync.Map // CRD name -> *encodedSpec
	// controllersDue is set by a CRD create, which answers before the controllers run (settleControllers).
	controllersDue atomic.Bool
	openapi        openAPICache
}

// jsonPatchMaxCopyBytes is kube-apiserver's cap on what the copy operations of one JSON patch may add (its
// JSONPatchMaxCopyBytes, 3 MiB): without it a short patch of repeated copies doubles an object per operation.
const jsonPatchMaxCopyBytes = 3 << 20

// limitJSONPatchCopies sets json-patch's process-wide copy limit as upstream's server config does: lowered to
// jsonPatchMaxCopyBytes, never raised above a smaller limit someone else set.
func limitJSONPatchCopies() {
	for {
		existing := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if existing > 0 && existing < jsonPatchMaxCopyBytes {
			return
		}
		if atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, existing, jsonPatchMaxCopyBytes) {
			return
		}
	}
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	limitJSONPatchCopies()
	return &Server{
		cfg: cfg,
		reqInfo: &request.RequestInfoFactory{
			APIPrefixes:          sets.NewString("api", "apis"),
			GrouplessAPIPrefixes: sets.NewString("api"),
		},
	}, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rec := &warnings{}
	defer func() {
		if p := recover(); p != nil {
			// A panic is a bug of ours or of upstream's on strange input: the caller gets a 500 Status
			// and the engine keeps serving.
			err := apierrors.NewInternalError(fmt.Errorf("panic: %v\n%s", p, firstLines(string(debug.Stack()), 12)))
			s.write(w, req, rec, reply{code: http.StatusInternalServerError, obj: errorToStatus(err)}, negotiation.MediaTypeOptions{})
		}
	}()
	s.settleControllers()
	ctx := warning.WithWarningRecorder(req.Context(), rec)
	req = req.WithContext(ctx)
	if req.ContentLength > s.cfg.MaxRequestBytes {
		s.fail(w, req, rec, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", s.cfg.MaxRequestBytes)))
		return
	}
	req.Body = http.MaxBytesReader(nil, req.Body, s.cfg.MaxRequestBytes)

	info, err := s.reqInfo.NewRequestInfo(req)
	if err != nil {
		s.fail(w, req, rec, apierrors.NewBadRequest(err.Error()))
		return
	}
	ctx = request.WithRequestInfo(ctx, info)
	req = req.WithContext(ctx)
	if !info.IsResourceRequest {
		s.serveNonResource(w, req, rec, info)
		return
	}
	if info.APIGroup == apiextensionsv1.GroupName && info.Resource == "customresourcedefinitions" {
		s.serveCRD(w, req, rec, info)
		return
	}
	if h, ok := s.cfg.Admission.(groupServer); ok && info.APIGroup == admissionGroup {
		// The admission chain's configuration is its own API (crdplay/policies); it answers with this
		// request's warnings.
		h.ServeHTTP(&warningWriter{ResponseWriter: w, rec: rec}, req)
		return
	}
	s.serveCustomResource(w, req, rec, info)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// fail answers with the Status of err.
func (s *Server) fail(w http.ResponseWriter, req *http.Request, rec *warnings, err error) {
	st := errorToStatus(err)
	// As responsewriters.ErrorNegotiated: the error in the media type the Accept header asks for (no Table or
	// other transformation), or, when none can be negotiated, as indented JSON: the error is not hidden
	// behind the failed negotiation.
	mt, _, nerr := negotiation.NegotiateOutputMediaType(req, outputSerializers{}, negotiation.DefaultEndpointRestrictions)
	if nerr != nil {
		s.writeRawJSON(w, rec, int(st.Code), st)
		return
	}
	s.write(w, req, rec, reply{code: int(st.Code), obj: st}, mt)
}

// write sends a reply with the request's warnings, as JSON unless YAML was negotiated.
func (s *Server) write(w http.ResponseWriter, req *http.Request, rec *warnings, r reply, mt negotiation.MediaTypeOptions) {
	for _, h := range rec.headers() {
		w.Header().Add("Warning", h)
	}
	var v interface{} = r.obj
	if r.raw != nil {
		v = r.raw
	}
	asYAML := mt.Accepted.MediaTypeSubType == "yaml"
	var body []byte
	var err error
	if crd, ok := v.(*apiextensionsv1.CustomResourceDefinition); ok {
		if b, ok := s.marshalCRD(crd); ok {
			// What encode writes: the JSON and a newline.
			body, err = encoded(append(b, '\n'), asYAML)
		}
	}
	if list, ok := v.(*unstructured.UnstructuredList); ok {
		// What encode writes for a list, unless the request's context is done before its items are: its answer
		// is then the deadline's, which the server has given already.
		b, ok, cerr := appendJSONList(req.Context(), make([]byte, 0, 4096), list)
		switch {
		case cerr != nil:
			st := errorToStatus(requestGone())
			body, _ = encode(st, false)
			r.code, asYAML = int(st.Code), false
		case ok:
			body, err = encoded(append(b, '\n'), asYAML)
		}
	}
	if body == nil && err == nil {
		body, err = encode(v, asYAML)
	}
	if err != nil {
		st := errorToStatus(apierrors.NewInternalError(err))
		body, _ = encode(st, false)
		r.code, asYAML = int(st.Code), false
	}
	if !asYAML && (mt.Pretty || isPrettyPrint(req)) {
		// The pretty serializer indents by two spaces and, unlike the compact one, ends without a newline.
		var buf bytes.Buffer
		if json.Indent(&buf, bytes.TrimSuffix(body, []byte("\n")), "", "  ") == nil {
			body = buf.Bytes()
		}
	}
	if asYAML {
		w.Header().Set("Content-Type", "application/yaml")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(r.code)
	w.Write(body)
}

// isPrettyPrint is the negotiation's rule for indented JSON: the pretty parameter when it parses as a bool,
// otherwise whether the client looks like a browser or a command-line HTTP tool.
func isPrettyPrint(req *http.Request) bool {
	if req.URL != nil && strings.Contains(req.URL.RawQuery, "pretty") {
		if pp := req.URL.Query().Get("pretty"); len(pp) > 0 {
			pretty, _ := strconv.ParseBool(pp)
			return pretty
		}
	}
	ua := req.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}

// notFound is the answer for paths nothing serves, as kube-apiserver's NotFound handler gives it.
func (s *Server) notFound(w http.ResponseWriter, req *http.Request, rec *warnings) {
	for _, h := range rec.headers() {
		w.Header().Add("Warning", h)
	}
	http.NotFound(w, req)
}

func (s *Server) now() time.Time { return s.cfg.Now() }

// ctxWithNamespace prepares the context the upstream strategy helpers expect.
func ctxWithNamespace(ctx context.Context, ns string) context.Context {
	return request.WithNamespace(ctx, ns)
}

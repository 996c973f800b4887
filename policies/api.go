package policies

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install" // the group's types, defaults and conversions in legacyscheme
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/resolver"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"crdplay/engine/storage"
	"crdplay/internal/fieldmanager"
)

// API serves the policies and bindings of admissionregistration.k8s.io/v1 from a storage, as kube-apiserver's
// registry does with k8s.io/kubernetes' strategies (defaulting, validation with the expressions compiled,
// generation, status), and is the admission chain of what it holds: pass it as engine.Options.Admission, and
// the engine routes the group's requests to it and runs its chain on writes. Attach gives it the engine.
//
// After a write of a ValidatingAdmissionPolicy, the status controller of kube-controller-manager type-checks
// its expressions against the schemas of what it matches and applies status.typeChecking; here it runs right
// after the write, before the answer is sent, so every later request sees its status (a cluster's shows it a
// moment later).
type API struct {
	store  storage.Interface
	now    func() time.Time
	server http.Handler // the engine: the chain's OpenAPI and params requests, the type checker's schemas

	resources map[string]*resource

	ctx  context.Context // until Close
	stop context.CancelFunc

	mu         sync.Mutex
	following  bool // the watch of the storage (follow) is started
	namespaces []*corev1.Namespace
	configMaps []*corev1.ConfigMap
	chain      *Chain
	dirty      bool        // the configuration may have changed since the chain was built (markChanged)
	built      fingerprint // the stored configuration the chain was built from
	builtRev   int64       // the storage revision the chain's params were read at
	params     bool        // a policy of the chain has a paramKind
}

var (
	_ admission.MutationInterface   = (*API)(nil)
	_ admission.ValidationInterface = (*API)(nil)
	_ http.Handler                  = (*API)(nil)
)

// Group is the API group the API serves.
const Group = admissionregistrationv1.GroupName

var (
	v1GV       = admissionregistrationv1.SchemeGroupVersion
	internalGV = schema.GroupVersion{Group: Group, Version: runtime.APIVersionInternal}
)

// keyPrefix is where the API keeps its objects in the engine's storage, apart from the engine's own keys.
const keyPrefix = "/registry/" + Group + "/"

// strategy is what the registry's strategies for these kinds implement.
type strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

// resetFields are the fields an endpoint's strategy resets (the managed fields exclude them); the binding and
// mutating policy strategies declare none.
func resetFields(s strategy) map[fieldpath.APIVersion]*fieldpath.Set {
	if r, ok := s.(rest.ResetFieldsStrategy); ok {
		return r.GetResetFields()
	}
	return nil
}

// resource is one of the served resources.
type resource struct {
	plural, kind string
	newObj       func() runtime.Object // internal version
	strategy     strategy
	status       strategy // nil without a status subresource
	fm, statusFM *managedfields.FieldManager
}

// NewAPI returns the API over store, whose clock is now (time.Now when nil).
func NewAPI(store storage.Interface, now func() time.Time) (*API, error) {
	if now == nil {
		now = time.Now
	}
	a := &API{store: store, now: now, dirty: true, server: http.NotFoundHandler(), namespaces: clusterNamespaces()}
	a.ctx, a.stop = context.WithCancel(context.Background())
	// No authorizer: the strategies' check that a policy's author may read its params kind is the host's
	// authorization's to make (server/ authorizes each request); the resolver is then never asked.
	noResolver := resolver.ResourceResolverFunc(func(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
		return schema.GroupVersionResource{}, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	})
	vap := validatingadmissionpolicy.NewStrategy(nil, noResolver)
	map_ := mutatingadmissionpolicy.NewStrategy(nil, noResolver)
	list := []*resource{
		{plural: "validatingadmissionpolicies", kind: "ValidatingAdmissionPolicy",
			newObj:   func() runtime.Object { return &admissionregistration.ValidatingAdmissionPolicy{} },
			strategy: vap, status: validatingadmissionpolicy.NewStatusStrategy(vap)},
		{plural: "validatingadmissionpolicybindings", kind: "ValidatingAdmissionPolicyBinding",
			newObj:   func() runtime.Object { return &admissionregistration.ValidatingAdmissionPolicyBinding{} },
			strategy: validatingadmissionpolicybinding.NewStrategy(nil, nil, noResolver)},
		{plural: "mutatingadmissionpolicies", kind: "MutatingAdmissionPolicy",
			newObj:   func() runtime.Object { return &admissionregistration.MutatingAdmissionPolicy{} },
			strategy: map_},
		{plural: "mutatingadmissionpolicybindings", kind: "MutatingAdmissionPolicyBinding",
			newObj:   func() runtime.Object { return &admissionregistration.MutatingAdmissionPolicyBinding{} },
			strategy: mutatingadmissionpolicybinding.NewStrategy(nil, nil, noResolver)},
	}
	tc := applyconfigurations.NewTypeConverter(legacyscheme.Scheme)
	a.resources = map[string]*resource{}
	for _, r := range list {
		var err error
		if r.fm, err = newFieldManager(tc, r, "", r.strategy); err != nil {
			return nil, err
		}
		if r.status != nil {
			if r.statusFM, err = newFieldManager(tc, r, "status", r.status); err != nil {
				return nil, err
			}
		}
		a.resources[r.plural] = r
	}
	return a, nil
}

// newFieldManager is the field manager of an endpoint, as the API installer builds it: the type converter of
// the built-in types, the internal version as hub, the strategy's reset fields excluded.
func newFieldManager(tc managedfields.TypeConverter, r *resource, subresource string, s strategy) (*managedfields.FieldManager, error) {
	return managedfields.NewDefaultFieldManager(tc, legacyscheme.Scheme, legacyscheme.Scheme, legacyscheme.Scheme,
		v1GV.WithKind(r.kind), internalGV, subresource, fieldpath.NewExcludeFilterSetMap(resetFields(s)))
}

// Attach gives the API the engine it belongs to (the handler engine.NewHandler returned with this API as its
// Admission): the chain asks it for the OpenAPI schemas of what mutations patch and for params objects, and the
// status controller's type checker for the schemas of what policies match.
func (a *API) Attach(server http.Handler) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.server = server
	a.dirty = true
}

// SetCoreObjects sets the namespaces and ConfigMaps the policies read (namespaceSelectors, ConfigMap params):
// objects of the core API, which the engine does not serve. The namespaces are those beside the ones every
// cluster makes (default, kube-node-lease, kube-public, kube-system), which are always there; each is labelled
// with its name, as the namespace strategy labels every namespace. Until it is called there are only those
// four namespaces and no ConfigMaps.
func (a *API) SetCoreObjects(namespaces []*corev1.Namespace, configMaps []*corev1.ConfigMap) {
	all := clusterNamespaces()
	for _, n := range namespaces {
		all = append(all, withNameLabel(n.DeepCopy()))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.namespaces, a.configMaps = all, configMaps
	a.dirty = true
}

// Close stops the chain and the API's watch of the storage.
func (a *API) Close() {
	a.stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.chain != nil {
		a.chain.Close()
		a.chain = nil
	}
}

func (a *API) key(r *resource, name string) string { return keyPrefix + r.plural + "/" + name }

// ServeHTTP serves a request for the group's resources. The engine calls it with the request info and the
// warning recorder in the context.
func (a *API) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	info, ok := request.RequestInfoFrom(ctx)
	if !ok || !info.IsResourceRequest || info.APIVersion != v1GV.Version {
		http.NotFound(w, req)
		return
	}
	r := a.resources[info.Resource]
	if r == nil || !a.served(r) || (info.Subresource != "" && (info.Subresource != "status" || r.status == nil)) {
		// What the group version's handler answers for a resource it does not serve.
		responsewriters.ErrorNegotiated(apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false),
			legacyscheme.Codecs, v1GV, w, req)
		return
	}
	var obj runtime.Object
	code := http.StatusOK
	var err error
	switch info.Verb {
	case "get":
		obj, err = a.get(ctx, r, info.Name)
	case "list":
		obj, err = a.list(ctx, r)
	case "create":
		code = http.StatusCreated
		obj, err = a.create(ctx, req, r)
	case "update":
		obj, err = a.update(ctx, req, r, info.Name, info.Subresource == "status")
	case "patch":
		obj, err = a.patch(ctx, req, r, info.Name, info.Subresource == "status")
	case "delete":
		obj, err = a.delete(ctx, req, r, info.Name)
	default:
		err = apierrors.NewMethodNotSupported(schema.GroupResource{Group: Group, Resource: r.plural}, info.Verb)
	}
	if err != nil {
		responsewriters.ErrorNegotiated(err, legacyscheme.Codecs, v1GV, w, req)
		return
	}
	a.respond(w, req, code, obj)
}

// tableConvertor prints the kinds as kube-apiserver's registry does (its printers' columns: a policy's
// validations and paramKind, a binding's policy and params).
var tableConvertor = printerstorage.TableConvertor{TableGenerator: printers.NewTableGenerator().With(printersinternal.AddHandlers)}

// respond writes obj as the handlers' transformResponseObject does: a Table when the request asks for one
// (kubectl get), else the object in v1.
func (a *API) respond(w http.ResponseWriter, req *http.Request, code int, obj runtime.Object) {
	mt, _, err := negotiation.NegotiateOutputMediaType(req, legacyscheme.Codecs, negotiatedScope{})
	if err != nil {
		responsewriters.ErrorNegotiated(err, legacyscheme.Codecs, v1GV, w, req)
		return
	}
	if _, isStatus := obj.(*metav1.Status); mt.Convert != nil && mt.Convert.Kind == "Table" && !isStatus {
		t := mt.Convert
		opts := &metav1.TableOptions{}
		if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
			responsewriters.ErrorNegotiated(apierrors.NewBadRequest(err.Error()), legacyscheme.Codecs, v1GV, w, req)
			return
		}
		table, err := tableConvertor.ConvertToTable(req.Context(), obj, opts)
		if err != nil {
			responsewriters.ErrorNegotiated(err, legacyscheme.Codecs, v1GV, w, req)
			return
		}
		for i := range table.Rows {
			item := &table.Rows[i]
			switch opts.IncludeObject {
			case metav1.IncludeObject:
				item.Object.Object, err = legacyscheme.Scheme.ConvertToVersion(item.Object.Object, v1GV)
				if err != nil {
					responsewriters.ErrorNegotiated(apierrors.NewInternalError(err), legacyscheme.Codecs, v1GV, w, req)
					return
				}
			case metav1.IncludeNone:
				item.Object.Object = nil
			default:
				m, err := meta.Accessor(item.Object.Object)
				if err != nil {
					responsewriters.ErrorNegotiated(apierrors.NewInternalError(err), legacyscheme.Codecs, v1GV, w, req)
					return
				}
				partial := meta.AsPartialObjectMetadata(m)
				partial.GetObjectKind().SetGroupVersionKind(t.GroupVersion().WithKind("PartialObjectMetadata"))
				item.Object.Object = partial
			}
		}
		responsewriters.WriteObjectNegotiated(metainternalversionscheme.Codecs, negotiatedScope{}, t.GroupVersion(), w, req, code, table, false)
		return
	}
	responsewriters.WriteObjectNegotiated(legacyscheme.Codecs, negotiatedScope{}, v1GV, w, req, code, obj, false)
}

// served reports whether kube-apiserver serves r at the emulated version: MutatingAdmissionPolicy v1 is GA in
// 1.36 and its gate off before (the MutatingAdmissionPolicy feature gate, which the engine's emulation sets).
func (a *API) served(r *resource) bool {
	if strings.HasPrefix(r.plural, "mutating") {
		return utilfeature.DefaultFeatureGate.Enabled(features.MutatingAdmissionPolicy)
	}
	return true
}

// negotiatedScope is what the endpoints offer: every media type the codecs do, and Tables.
type negotiatedScope struct{}

func (negotiatedScope) AllowsMediaTypeTransform(mimeType, mimeSubType string, target *schema.GroupVersionKind) bool {
	// As the handlers' scope: the object itself, or a Table of it (meta.k8s.io v1 or v1beta1).
	return target == nil || (target.Kind == "Table" && (target.GroupVersion() == metav1.SchemeGroupVersion || target.GroupVersion() == metav1beta1.SchemeGroupVersion))
}
func (negotiatedScope) AllowsServerVersion(string) bool  { return false }
func (negotiatedScope) AllowsStreamSchema(s string) bool { return s == "watch" }

func (a *API) gr(r *resource) schema.GroupResource {
	return schema.GroupResource{Group: Group, Resource: r.plural}
}

// read returns the stored object name, in the internal version, with its revision as resourceVersion.
func (a *API) read(ctx context.Context, r *resource, name string) (runtime.Object, int64, error) {
	o, err := a.store.Get(ctx, a.key(r, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, 0, apierrors.NewNotFound(a.gr(r), name)
	}
	if err != nil {
		return nil, 0, apierrors.NewInternalError(err)
	}
	obj, err := decodeStored(r, o)
	return obj, o.Revision, err
}

// decodeStored decodes stored bytes as the storage codec does: the stored version's defaults, then the
// internal version.
func decodeStored(r *resource, o storage.Object) (runtime.Object, error) {
	obj, _, err := legacyscheme.Codecs.UniversalDecoder(internalGV).Decode(o.Value, nil, r.newObj())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := setResourceVersion(obj, o.Revision); err != nil {
		return nil, err
	}
	return obj, nil
}

func setResourceVersion(obj runtime.Object, rev int64) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	return nil
}

func (a *API) get(ctx context.Context, r *resource, name string) (runtime.Object, error) {
	obj, _, err := a.read(ctx, r, name)
	return obj, err
}

func (a *API) list(ctx context.Context, r *resource) (runtime.Object, error) {
	res, err := a.store.List(ctx, keyPrefix+r.plural+"/", storage.ListOptions{})
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	items := make([]runtime.Object, 0, len(res.Items))
	for _, o := range res.Items {
		obj, err := decodeStored(r, o)
		if err != nil {
			return nil, err
		}
		items = append(items, obj)
	}
	list, err := legacyscheme.Scheme.New(internalGV.WithKind(r.kind + "List"))
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := meta.SetList(list, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lm, _ := meta.ListAccessor(list)
	lm.SetResourceVersion(strconv.FormatInt(res.Revision, 10))
	return list, nil
}

// decodeBody decodes a create or update body into the internal version as the handlers do: the negotiated
// serializer, strict under fieldValidation Warn (the default) and Strict, then the body version's defaults and
// conversion. Unknown and duplicate fields are warnings under Warn and a 400 under Strict.
func (a *API) decodeBody(ctx context.Context, req *http.Request, r *resource, validation string) (runtime.Object, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, apierrors.NewRequestEntityTooLargeError(err.Error())
	}
	info, err := negotiation.NegotiateInputSerializer(req, false, legacyscheme.Codecs)
	if err != nil {
		return nil, err
	}
	directive := validation
	if directive == "" {
		directive = metav1.FieldValidationWarn
	}
	s := info.Serializer
	if (directive == metav1.FieldValidationWarn || directive == metav1.FieldValidationStrict) && info.StrictSerializer != nil {
		s = info.StrictSerializer
	}
	def := v1GV.WithKind(r.kind)
	obj, gvk, err := legacyscheme.Codecs.DecoderToVersion(s, internalGV).Decode(body, &def, r.newObj())
	if err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		switch {
		case isStrict && obj != nil && directive == metav1.FieldValidationWarn:
			for _, e := range strictErr.Errors() {
				warning.AddWarning(ctx, "", e.Error())
			}
		case isStrict && directive == metav1.FieldValidationStrict:
			return nil, apierrors.NewBadRequest(strictErr.Error())
		case gvk != nil && gvk.Kind != "":
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, r.kind, err))
		default:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v", r.kind, err))
		}
	}
	if gvk.GroupVersion() != v1GV {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", gvk.GroupVersion(), v1GV))
	}
	return obj, nil
}

// queryOptions decodes a request's options as the handlers do.
func queryOptions(req *http.Request, into runtime.Object) error {
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

func (a *API) create(ctx context.Context, req *http.Request, r *resource) (runtime.Object, error) {
	opts := &metav1.CreateOptions{}
	if err := queryOptions(req, opts); err != nil {
		return nil, err
	}
	if errs := metav1validation.ValidateCreateOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "CreateOptions"}, "", errs)
	}
	obj, err := a.decodeBody(ctx, req, r, opts.FieldValidation)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	rest.WipeObjectMetaSystemFields(m)
	if m.GetNamespace() != "" {
		// Cluster-scoped: the registry clears a namespace given in the body.
		m.SetNamespace("")
	}
	ctx = request.WithNamespace(ctx, "")
	live, _ := legacyscheme.Scheme.New(v1GV.WithKind(r.kind))
	obj = r.fm.UpdateNoErrors(live, obj, fieldmanager.Name(opts.FieldManager, req.UserAgent()))
	return a.createObject(ctx, r, obj, len(opts.DryRun) > 0)
}

// createObject is the registry's create of obj: system fields, name generation, the strategy, the write, the
// status controller.
func (a *API) createObject(ctx context.Context, r *resource, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	rest.FillObjectMetaSystemFields(m)
	m.SetCreationTimestamp(metav1.NewTime(a.now()))
	if m.GetGenerateName() != "" && m.GetName() == "" {
		m.SetName(r.strategy.GenerateName(m.GetGenerateName()))
	}
	if err := rest.BeforeCreate(r.strategy, ctx, obj); err != nil {
		return nil, err
	}
	data, err := runtime.Encode(legacyscheme.Codecs.LegacyCodec(v1GV), obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	name := m.GetName()
	if dryRun {
		if _, err := a.store.Get(ctx, a.key(r, name)); err == nil {
			return nil, apierrors.NewAlreadyExists(a.gr(r), name)
		}
		return decodeStored(r, storage.Object{Value: data})
	}
	rev, err := a.store.Create(ctx, a.key(r, name), data)
	if errors.Is(err, storage.ErrExists) {
		return nil, apierrors.NewAlreadyExists(a.gr(r), name)
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	a.markChanged()
	out, err := decodeStored(r, storage.Object{Value: data, Revision: rev})
	if err != nil {
		return nil, err
	}
	a.typeCheck(ctx, r, name)
	return out, nil
}

func (a *API) update(ctx context.Context, req *http.Request, r *resource, name string, status bool) (runtime.Object, error) {
	opts := &metav1.UpdateOptions{}
	if err := queryOptions(req, opts); err != nil {
		return nil, err
	}
	if errs := metav1validation.ValidateUpdateOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "UpdateOptions"}, "", errs)
	}
	obj, err := a.decodeBody(ctx, req, r, opts.FieldValidation)
	if err != nil {
		return nil, err
	}
	m, _ := meta.Accessor(obj)
	if m.GetName() != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	ctx = request.WithNamespace(ctx, "")
	s, fm := r.strategy, r.fm
	if status {
		s, fm = r.status, r.statusFM
	}
	live, rev, err := a.read(ctx, r, name)
	if err != nil {
		return nil, err
	}
	obj = fm.UpdateNoErrors(live, obj, fieldmanager.Name(opts.FieldManager, req.UserAgent()))
	return a.write(ctx, r, name, s, obj, live, rev, len(opts.DryRun) > 0)
}

// write is the registry's update of live (read at rev) to obj: the resourceVersion precondition, the strategy
// of the endpoint, the write, the status controller.
func (a *API) write(ctx context.Context, r *resource, name string, s strategy, obj, live runtime.Object, rev int64, dryRun bool) (runtime.Object, error) {
	m, _ := meta.Accessor(obj)
	if rv := m.GetResourceVersion(); rv == "" || rv == "0" {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: Group, Kind: r.kind}, name, field.ErrorList{
			field.Required(field.NewPath("metadata", "resourceVersion"), "must be specified for an update")})
	} else if rv != strconv.FormatInt(rev, 10) {
		return nil, apierrors.NewConflict(a.gr(r), name, errors.New(registryConflict))
	}
	if err := rest.BeforeUpdate(s, ctx, obj, live); err != nil {
		return nil, err
	}
	data, err := runtime.Encode(legacyscheme.Codecs.LegacyCodec(v1GV), obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if dryRun {
		return decodeStored(r, storage.Object{Value: data, Revision: rev})
	}
	newRev, err := a.store.Update(ctx, a.key(r, name), data, rev)
	if errors.Is(err, storage.ErrConflict) {
		return nil, apierrors.NewConflict(a.gr(r), name, errors.New(registryConflict))
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierrors.NewNotFound(a.gr(r), name)
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	a.markChanged()
	out, err := decodeStored(r, storage.Object{Value: data, Revision: newRev})
	if err != nil {
		return nil, err
	}
	a.typeCheck(ctx, r, name)
	return out, nil
}

// registryConflict is the registry's optimistic-lock message.
const registryConflict = "the object has been modified; please apply your changes to the latest version and try again"

func (a *API) delete(ctx context.Context, req *http.Request, r *resource, name string) (runtime.Object, error) {
	opts := &metav1.DeleteOptions{}
	if err := queryOptions(req, opts); err != nil {
		return nil, err
	}
	live, rev, err := a.read(ctx, r, name)
	if err != nil {
		return nil, err
	}
	m, _ := meta.Accessor(live)
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != m.GetUID() {
			return nil, apierrors.NewConflict(a.gr(r), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, m.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
			return nil, apierrors.NewConflict(a.gr(r), name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, m.GetResourceVersion()))
		}
	}
	if len(opts.DryRun) == 0 {
		if _, err := a.store.Delete(ctx, a.key(r, name), rev); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil, apierrors.NewNotFound(a.gr(r), name)
			}
			return nil, apierrors.NewInternalError(err)
		}
		a.markChanged()
	}
	return &metav1.Status{
		Status:  metav1.StatusSuccess,
		Details: &metav1.StatusDetails{Name: name, Group: Group, Kind: r.plural, UID: m.GetUID()},
	}, nil
}

// current returns the chain of the configuration stored now, or nil when there is none. The chain is built
// again when the stored configuration changed (written through this API or through another server on the
// same etcd: the keys' revisions tell), when the core objects changed, and, while a policy has params, when
// anything was written since the chain read them (params are custom resources of any kind; telling their
// writes apart would cost more than this check).
func (a *API) current(ctx context.Context) (*Chain, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.following {
		a.following = true
		go a.follow()
	}
	if a.chain == nil && !a.dirty {
		// No configuration, and none written since: the writes of a cluster without policies cost nothing
		// more (the common case, and every write of the server's).
		return nil, nil
	}
	res, err := a.store.List(ctx, keyPrefix, storage.ListOptions{})
	if err != nil {
		// As upstream's plugins read informers' caches, a storage that cannot be read leaves the chain as it
		// was; the write itself then fails on the storage, with the engine's answer for that.
		return a.chain, nil
	}
	fp := fingerprint{count: len(res.Items)}
	for _, o := range res.Items {
		fp.sum += o.Revision
		fp.max = max(fp.max, o.Revision)
	}
	if fp.count == 0 {
		if a.chain != nil {
			a.chain.Close()
			a.chain = nil
		}
		a.dirty = false
		return nil, nil
	}
	if a.chain != nil && !a.dirty && fp == a.built && (!a.params || res.Revision == a.builtRev) {
		return a.chain, nil
	}
	set, params, err := a.configuration(ctx, res.Items)
	if err != nil {
		return nil, err
	}
	c, err := New(set)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if a.chain != nil {
		a.chain.Close()
	}
	a.chain, a.dirty, a.params, a.built, a.builtRev = c, false, params, fp, res.Revision
	return c, nil
}

// follow marks the configuration changed whenever the storage reports a write under keyPrefix: another
// server's on the same etcd, which the next admission then reads (this API's own writes mark it at once). A
// watch that ends (the storage fell behind or restarted) is opened again, and what it may have missed counts
// as a change.
func (a *API) follow() {
	for a.ctx.Err() == nil {
		events, err := a.store.Watch(a.ctx, keyPrefix, 0)
		if err == nil {
			a.markChanged()
			for range events {
				a.markChanged()
			}
		}
		select {
		case <-a.ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// markChanged makes the next admission read the stored configuration again.
func (a *API) markChanged() {
	a.mu.Lock()
	a.dirty = true
	a.mu.Unlock()
}

// fingerprint tells stored configurations apart: how many objects, and their revisions.
type fingerprint struct {
	count    int
	sum, max int64
}

// configuration decodes the stored policies and bindings, and reads the params objects they may name.
func (a *API) configuration(ctx context.Context, stored []storage.Object) (Set, bool, error) {
	set := Set{Server: a.server, Namespaces: a.namespaces, ConfigMaps: a.configMaps}
	var kinds []*admissionregistrationv1.ParamKind
	for _, o := range stored {
		obj, _, err := legacyscheme.Codecs.UniversalDecoder(v1GV).Decode(o.Value, nil, nil)
		if err != nil {
			return set, false, apierrors.NewInternalError(err)
		}
		_ = setResourceVersion(obj, o.Revision)
		switch t := obj.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			set.ValidatingPolicies = append(set.ValidatingPolicies, t)
			kinds = append(kinds, t.Spec.ParamKind)
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			set.ValidatingBindings = append(set.ValidatingBindings, t)
		case *admissionregistrationv1.MutatingAdmissionPolicy:
			set.MutatingPolicies = append(set.MutatingPolicies, t)
			kinds = append(kinds, t.Spec.ParamKind)
		case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
			set.MutatingBindings = append(set.MutatingBindings, t)
		}
	}
	params := false
	for _, k := range kinds {
		if k == nil {
			continue
		}
		params = true
		if err := addParams(&set, k, a.server); err != nil {
			return set, false, err
		}
	}
	return set, params, nil
}

// Handles implements admission.Interface: writes of every kind may be subject to policies.
func (a *API) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete || op == admission.Connect
}

// Admit implements admission.MutationInterface with the chain of the stored configuration.
func (a *API) Admit(ctx context.Context, attr admission.Attributes, o admission.ObjectInterfaces) error {
	c, err := a.current(ctx)
	if err != nil {
		return err
	}
	if c == nil || !c.Handles(attr.GetOperation()) {
		return nil
	}
	return c.Admit(ctx, attr, o)
}

// Validate implements admission.ValidationInterface with the chain of the stored configuration.
func (a *API) Validate(ctx context.Context, attr admission.Attributes, o admission.ObjectInterfaces) error {
	c, err := a.current(ctx)
	if err != nil {
		return err
	}
	if c == nil || !c.Handles(attr.GetOperation()) {
		return nil
	}
	return c.Validate(ctx, attr, o)
}

// APIResources are the group's v1 resources as discovery lists them (the verbs these handlers serve).
func (a *API) APIResources() []metav1.APIResource {
	verbs := metav1.Verbs{"create", "delete", "get", "list", "patch", "update"}
	var out []metav1.APIResource
	for _, plural := range sortedKeys(a.resources) {
		r := a.resources[plural]
		if !a.served(r) {
			continue
		}
		out = append(out, metav1.APIResource{Name: r.plural, SingularName: strings.ToLower(r.kind), Kind: r.kind,
			Verbs: verbs, Categories: []string{"api-extensions"}})
		if r.status != nil {
			out = append(out, metav1.APIResource{Name: r.plural + "/status", Kind: r.kind, Verbs: metav1.Verbs{"get", "patch", "update"}})
		}
	}
	return out
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// openAPIV3 is kube-apiserver v1.37.2's /openapi/v3/apis/admissionregistration.k8s.io/v1, recorded from it
// (policies/openapi/README.md): the group's kinds as kubectl validates and explains them.
//
//go:embed openapi/admissionregistration.k8s.io_v1.json
var openAPIV3 []byte

// OpenAPIV3 is the group version's OpenAPI v3 document.
func (a *API) OpenAPIV3() []byte { return openAPIV3 }

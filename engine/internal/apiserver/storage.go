package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apistorage "k8s.io/apiserver/pkg/storage"

	"crdplay/engine/storage"
)

// keyPrefix is where objects live in storage: the standalone apiextensions-apiserver's etcd prefix, so that
// storage errors name the same keys as the recorded ones.
const keyPrefix = "/registry/apiextensions.kubernetes.io"

// crdPrefix is where CRDs are stored: keyPrefix + "/apiextensions.k8s.io/customresourcedefinitions/".
const crdPrefix = storage.CRDPrefix

func crdKey(name string) string { return crdPrefix + name }

// checkKeyName refuses a name that cannot be the last segment of an object's key ("..", ".", or one with '/'
// or '%'), as the registry's NamespaceKeyFunc and NoNamespaceKeyFunc refuse it before any storage call: a
// request naming it in its URL is a 400, not a 404.
func checkKeyName(name string) error {
	if msgs := content.IsPathSegmentName(name); len(msgs) != 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("Name parameter invalid: %q: %s", name, strings.Join(msgs, ";")))
	}
	return nil
}

const optimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// lostRace is the 409 of a write whose expected revision is no longer stored: another write came first. The
// registry's GuaranteedUpdate retries it from a fresh read; only where nothing retries does a client see it.
type lostRace struct{ *apierrors.StatusError }

func (e lostRace) Unwrap() error { return e.StatusError }

// errLostRace is the lostRace of the object name of gr.
func errLostRace(gr schema.GroupResource, name string) error {
	return lostRace{apierrors.NewConflict(gr, name, fmt.Errorf(optimisticLockErrorMsg))}
}

// isLostRace reports whether err is a write that lost a race, to be tried again from a fresh read.
func isLostRace(err error) bool {
	var lr lostRace
	return errors.As(err, &lr)
}

// listContextCheck is how many objects of a list are decoded, or encoded, between looks at the request's
// context.
const listContextCheck = 64

// requestGone is the API error for work stopped because its request's context is done: the server's timeout
// filter has answered 504 already (or the client went away), so the answer only needs to say so, as that 504.
func requestGone() error {
	return apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)
}

// isContextDone reports whether err is a context's: the request's deadline passed or it was cancelled.
func isContextDone(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// storageUnavailable is the API error for a storage failure: 503 when the store cannot be reached, 500 otherwise
// (a read stopped because the request's context is done: requestGone).
func storageUnavailable(err error) error {
	if isContextDone(err) {
		return requestGone()
	}
	if errors.Is(err, storage.ErrUnavailable) {
		return apierrors.NewServiceUnavailable(err.Error())
	}
	return apierrors.NewInternalError(err)
}

// storageWriteError is the API error for a write the store failed: 503 when the store cannot be reached;
// otherwise the store's own error, which etcd3's store hands back unchanged and kube-apiserver answers as a 500
// with its text and no reason (as "etcdserver: request is too large" for an object over etcd's request limit).
func storageWriteError(err error) error {
	if errors.Is(err, storage.ErrUnavailable) {
		return apierrors.NewServiceUnavailable(err.Error())
	}
	return err
}

// corrupt is the error for a stored object that cannot be turned into the request version (e.g. a failing
// conversion webhook), with the key relative to the storage prefix as etcd3's store reports it on reads.
func corrupt(key string, rev int64, err error) error {
	return apistorage.NewCorruptObjError(key, fmt.Errorf("object not decodable revision=%d: %w", rev, err))
}

// key is where the custom resource name of namespace ns is stored.
func (r *crRequest) key(ns, name string) string {
	return r.collectionPrefix(ns) + name
}

// collectionPrefix is the key prefix of a list: one namespace, or all of them.
func (r *crRequest) collectionPrefix(ns string) string {
	k := keyPrefix + "/" + r.ci.crd.Spec.Group + "/" + r.ci.crd.Status.AcceptedNames.Plural + "/"
	if ns != "" {
		k += ns + "/"
	}
	return k
}

// decodeStored turns stored bytes into the request version.
func (r *crRequest) decodeStored(o storage.Object) (*unstructured.Unstructured, error) {
	into := &unstructured.Unstructured{}
	into.SetGroupVersionKind(r.vi.kind)
	out, _, err := r.vi.requestCodec.Decode(o.Value, nil, into)
	if err != nil {
		return nil, err
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", out)
	}
	u.SetResourceVersion(strconv.FormatInt(o.Revision, 10))
	return u, nil
}

// read reads the object stored at key, both as stored and in the request version, translating storage errors
// as the generic registry does; name is the object's name in errors.
func (r *crRequest) read(ctx context.Context, key, name string) (storage.Object, *unstructured.Unstructured, error) {
	if err := checkKeyName(name); err != nil {
		return storage.Object{}, nil, err
	}
	o, err := r.s.cfg.Storage.Get(ctx, key)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return storage.Object{}, nil, apierrors.NewNotFound(r.gr(), name)
		}
		return storage.Object{}, nil, storageUnavailable(err)
	}
	u, err := r.decodeStored(o)
	if err != nil {
		return storage.Object{}, nil, apierrors.NewInternalError(corrupt(key[len(keyPrefix):], o.Revision, err))
	}
	return o, u, nil
}

// getObject reads one object in the request version.
func (r *crRequest) getObject(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	_, u, err := r.read(ctx, r.key(ns, name), name)
	return u, err
}

// encodeForStorage converts obj to the storage version and serialises it without a resourceVersion.
func (r *crRequest) encodeForStorage(obj *unstructured.Unstructured) ([]byte, error) {
	return r.encodeOwnedForStorage(obj.DeepCopy())
}

// encodeOwnedForStorage is encodeForStorage of an object the caller made for the write and does not use
// afterwards (create's copy): it is changed rather than copied again.
func (r *crRequest) encodeOwnedForStorage(obj *unstructured.Unstructured) ([]byte, error) {
	obj.SetResourceVersion("")
	obj.SetSelfLink("")
	if r.vi.name == r.ci.storageVersion && obj.GroupVersionKind() == r.vi.kind {
		// In the storage version the codec writes the object without conversion, with the unstructured JSON
		// scheme's Encoder: appendJSON writes the same bytes.
		if b, ok := appendJSON(make([]byte, 0, 1024), obj.Object, 1); ok {
			return append(b, '\n'), nil
		}
	}
	return runtime.Encode(r.vi.requestCodec, obj)
}

// storedResult is what a write returns: the stored bytes read back as a read would see them, as etcd3's store
// decodes what it wrote. written, if not nil, is the object that data encodes (encodeOwnedForStorage), which
// the server's build decodes from a copy rather than from the bytes (decodeWritten, storedcopy.go).
func (r *crRequest) storedResult(data []byte, rev int64, written *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if u, ok := r.decodeWritten(written); ok {
		u.SetResourceVersion(strconv.FormatInt(rev, 10))
		return u, nil
	}
	return r.decodeStored(storage.Object{Value: data, Revision: rev})
}

// getCRDShared reads a CRD for callers that only read it (serving its custom resources): it decodes a CRD
// once per storage revision, as kube-apiserver serves custom resources from its CRD informer's cache rather
// than from etcd. Decoding is what a request would otherwise pay for: about 25 ms natively, and more in the
// browser, for the largest real CRDs (2.8 MB). A store that keeps a watched copy of the CRDs (storage.Cache,
// the server's etcd) answers from it, as the informer does, without a round trip to etcd per request. The
// returned CRD is shared and must not be modified.
func (s *Server) getCRDShared(ctx context.Context, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	key := crdKey(name)
	if c, ok := s.cfg.Storage.(storage.Cache); ok {
		if o, found, ok := c.Cached(key); ok {
			if !found {
				return nil, fmt.Errorf("%s: %w", key, storage.ErrNotFound)
			}
			return s.sharedCRD(o)
		}
	}
	o, err := s.cfg.Storage.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return s.sharedCRD(o)
}

// sharedCRD decodes a stored CRD, or returns the shared copy already decoded from the same revision.
func (s *Server) sharedCRD(o storage.Object) (*apiextensionsv1.CustomResourceDefinition, error) {
	name := strings.TrimPrefix(o.Key, crdPrefix)
	if v, ok := s.decoded.Load(name); ok {
		if c := v.(*apiextensionsv1.CustomResourceDefinition); c.ResourceVersion == strconv.FormatInt(o.Revision, 10) {
			return c, nil
		}
	}
	c, err := decodeCRD(o)
	if err != nil {
		return nil, err
	}
	s.decoded.Store(name, c)
	return c, nil
}

// readCRDShared is readCRD for a GET, whose answer is only encoded: the CRD is shared (getCRDShared).
func (s *Server) readCRDShared(ctx context.Context, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	if err := checkKeyName(name); err != nil {
		return nil, err
	}
	o, err := s.cfg.Storage.Get(ctx, crdKey(name))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, apierrors.NewNotFound(crdGR, name)
		}
		return nil, storageUnavailable(err)
	}
	crd, err := s.sharedCRD(o)
	if err != nil {
		return nil, storageUnavailable(err)
	}
	return crd, nil
}

// readCRD reads a CRD of its own, translating storage errors as the registry does.
func (s *Server) readCRD(ctx context.Context, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	if err := checkKeyName(name); err != nil {
		return nil, err
	}
	o, err := s.cfg.Storage.Get(ctx, crdKey(name))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, apierrors.NewNotFound(crdGR, name)
		}
		return nil, storageUnavailable(err)
	}
	crd, err := decodeCRD(o)
	if err != nil {
		return nil, storageUnavailable(err)
	}
	return crd, nil
}

func decodeCRD(o storage.Object) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(o.Value, crd); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Key, err)
	}
	crd.ResourceVersion = strconv.FormatInt(o.Revision, 10)
	crd.APIVersion, crd.Kind = crdGVK.GroupVersion().String(), crdGVK.Kind
	return crd, nil
}

func encodeCRD(crd *apiextensionsv1.CustomResourceDefinition) ([]byte, error) {
	// A shallow copy: only its own ObjectMeta and TypeMeta change, and json.Marshal writes nothing.
	c := *crd
	c.ResourceVersion = ""
	c.APIVersion, c.Kind = crdGVK.GroupVersion().String(), crdGVK.Kind
	return json.Marshal(&c)
}

// listCRDs reads every CRD, and the store's revision, for callers that only read them (the controllers,
// discovery, OpenAPI): the CRDs are shared, as getCRDShared's, and must not be modified. The controllers list
// after every CRD write, and each list would otherwise decode every CRD again.
func (s *Server) listCRDs(ctx context.Context) ([]*apiextensionsv1.CustomResourceDefinition, int64, error) {
	res, err := s.cfg.Storage.List(ctx, crdPrefix, storage.ListOptions{})
	if err != nil {
		return nil, 0, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, o := range res.Items {
		crd, err := s.sharedCRD(o)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, crd)
	}
	return out, res.Revision, nil
}

// writeCRD stores crd over live with optimistic concurrency; a write that finds the revision moved or the CRD
// gone lost a race (errLostRace).
func (s *Server) writeCRD(ctx context.Context, crd, live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := encodeCRD(crd)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	liveRev, _ := strconv.ParseInt(live.ResourceVersion, 10, 64)
	// As etcd3's GuaranteedUpdate, an object whose encoding is what is stored is not written: the answer is the
	// stored object with its resourceVersion, and watchers see no event.
	if cur, err := s.cfg.Storage.Get(ctx, crdKey(crd.Name)); err == nil && cur.Revision == liveRev && bytes.Equal(cur.Value, data) {
		return decodeCRD(cur)
	}
	rev, err := s.cfg.Storage.Update(ctx, crdKey(crd.Name), data, liveRev)
	if err != nil {
		switch {
		case errors.Is(err, storage.ErrConflict), errors.Is(err, storage.ErrNotFound):
			return nil, errLostRace(crdGR, crd.Name)
		}
		return nil, storageWriteError(err)
	}
	return decodeCRD(storage.Object{Key: crdKey(crd.Name), Value: data, Revision: rev})
}

// writeOrDeleteCRD stores crd over live, or deletes it when it is being deleted and no finalizer is left.
func (s *Server) writeOrDeleteCRD(ctx context.Context, crd, live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	if crd.DeletionTimestamp != nil && len(crd.Finalizers) == 0 {
		rev, _ := strconv.ParseInt(live.ResourceVersion, 10, 64)
		if _, err := s.cfg.Storage.Delete(ctx, crdKey(crd.Name), rev); err != nil {
			if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
				return nil, errLostRace(crdGR, crd.Name)
			}
			return nil, storageWriteError(err)
		}
		s.infos.Delete(crd.Name)
		return crd, nil
	}
	return s.writeCRD(ctx, crd, live)
}

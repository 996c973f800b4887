package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"crdplay/engine/internal/crds"
	"crdplay/engine/storage"
)

// runControllers does synchronously what kube-apiserver's CRD controllers do shortly after a CRD write:
// accept names, establish, report schema problems, and finish deletions. Their status writes are recorded as
// manager "kube-apiserver" on the status subresource. One CRD's status can change another's (a deletion frees a
// name), so rounds repeat while they write something, four at most.
func (s *Server) runControllers(ctx context.Context) {
	// Cleared when they are done, not before: a request that comes meanwhile waits for s.mu.
	defer s.controllersDue.Store(false)
	for round := 0; round < 4; round++ {
		all, _, err := s.listCRDs(ctx)
		if err != nil {
			return
		}
		sort.SliceStable(all, func(i, j int) bool {
			if !all[i].CreationTimestamp.Equal(&all[j].CreationTimestamp) {
				return all[i].CreationTimestamp.Before(&all[j].CreationTimestamp)
			}
			return all[i].Name < all[j].Name
		})
		if s.finishCRDDeletions(ctx, all) {
			continue
		}
		if !s.reconcileCRDStatus(ctx, all) {
			return
		}
	}
}

// settleControllers runs the controllers that a CRD create left due. kube-apiserver answers a create before
// its controllers act on the CRD; so does the engine, but every request it serves after the answer sees what
// they wrote, as if they had acted at once: the create starts them in the background (settleLater), and a
// request that comes first runs them itself. They run in a context of their own, as upstream's controllers:
// no request's cancellation or warnings.
func (s *Server) settleControllers() {
	if !s.controllersDue.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.controllersDue.Load() {
		s.runControllers(context.Background())
	}
}

// finishCRDDeletions runs the finalizer controller on every CRD being deleted; it reports whether any moved on.
func (s *Server) finishCRDDeletions(ctx context.Context, all []*apiextensionsv1.CustomResourceDefinition) bool {
	progress := false
	for _, crd := range all {
		if crd.DeletionTimestamp != nil && s.finishCRDDeletion(ctx, crd) {
			progress = true
		}
	}
	return progress
}

// reconcileCRDStatus writes the conditions and accepted names the naming and establishing controllers compute
// for every CRD; it reports whether any was written.
func (s *Server) reconcileCRDStatus(ctx context.Context, all []*apiextensionsv1.CustomResourceDefinition) bool {
	progress := false
	for _, c := range crds.Reconcile(all, metav1.NewTime(s.now())) {
		var live *apiextensionsv1.CustomResourceDefinition
		for _, a := range all {
			if a.Name == c.Name {
				live = a
			}
		}
		if live == nil {
			continue
		}
		// The status write replaces the spec with a copy of live's (PrepareForStatusUpdate): only metadata,
		// which it changes in place, needs a copy of its own here, not every schema of the CRD.
		next := &apiextensionsv1.CustomResourceDefinition{TypeMeta: live.TypeMeta, ObjectMeta: *live.ObjectMeta.DeepCopy(), Spec: live.Spec, Status: c.Status}
		if out, err := s.writeCRDStatus(ctx, next, live); err == nil {
			progress = true
			// Nothing else holds the written CRD: the next round's list, and readers after it, share it.
			if out.DeletionTimestamp == nil {
				s.decoded.Store(out.Name, out)
			}
		}
	}
	return progress
}

// finishCRDDeletion is the finalizer controller: mark the deletion in progress, delete every instance, record
// the outcome and release the CRD, which the store then deletes.
func (s *Server) finishCRDDeletion(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) bool {
	now := metav1.NewTime(s.now())
	next := crd.DeepCopy()
	pending, deleteInstances := crds.BeginFinalize(next, now)
	if !pending {
		return false
	}
	live, err := s.writeCRDStatus(ctx, next, crd)
	if err != nil {
		return false
	}
	var deleteErr error
	if deleteInstances {
		deleteErr = s.deleteInstances(ctx, crd)
	}
	next = live.DeepCopy()
	if !crds.FinishFinalize(next, metav1.NewTime(s.now()), deleteErr) {
		s.writeCRDStatus(ctx, next, live)
		return false
	}
	if _, err := s.writeCRDStatus(ctx, next, live); err != nil {
		return false
	}
	s.infos.Delete(crd.Name)
	s.decoded.Delete(crd.Name)
	s.specJSON.Delete(crd.Name)
	return true
}

// deleteInstances deletes every stored object of a CRD's resource; the error is the last one met.
func (s *Server) deleteInstances(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	var deleteErr error
	prefix := keyPrefix + "/" + crd.Spec.Group + "/" + crd.Status.AcceptedNames.Plural + "/"
	res, err := s.cfg.Storage.List(ctx, prefix, storage.ListOptions{})
	if err != nil {
		deleteErr = err
	}
	for _, o := range res.Items {
		if _, err := s.cfg.Storage.Delete(ctx, o.Key, 0); err != nil && !errors.Is(err, storage.ErrNotFound) {
			deleteErr = err
		}
	}
	return deleteErr
}

// writeCRDStatus is a controller's write through /status as manager "kube-apiserver"; with the last
// finalizer gone from a CRD being deleted, the store deletes it instead.
func (s *Server) writeCRDStatus(ctx context.Context, next, live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	next, err := trackManagedFields(crdFieldManagers().status, live, next, "kube-apiserver")
	if err != nil {
		return nil, err
	}
	if err := crds.BeforeStatusUpdate(ctxWithNamespace(ctx, ""), next, live); err != nil {
		return nil, err
	}
	if next.DeletionTimestamp == nil && sameSpec(&next.Spec, &live.Spec) {
		if out, done, err := s.writeCRDKeepingSpec(ctx, next, live); done {
			return out, err
		}
	}
	return s.writeOrDeleteCRD(ctx, next, live)
}

// crdJSONStart is how every stored CRD begins (encodeCRD): its kind and apiVersion, then its metadata.
const crdJSONStart = `{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":`

// writeCRDKeepingSpec is writeCRD for a write that keeps live's spec (a controller's status write): it stores
// and answers the same as writeCRD, but neither encodes nor decodes the spec, most of a large CRD's bytes and
// time. Stored CRDs are encodeCRD's JSON, in which the spec sits between the metadata and the status; the stored
// bytes must be live's (its revision, and its metadata and status encoded as they start and end), and their
// spec is then live's spec encoded, since decoding and encoding again gives the same JSON. The new object is
// those bytes with its own metadata and status around them, and its decode is live's spec with its own
// metadata and status decoded. done is false (nothing written) when the stored bytes are not live's encoded
// so: writeCRD then does the write, or reports the conflict. TestWriteCRDKeepingSpec compares with writeCRD.
func (s *Server) writeCRDKeepingSpec(ctx context.Context, next, live *apiextensionsv1.CustomResourceDefinition) (out *apiextensionsv1.CustomResourceDefinition, done bool, err error) {
	key := crdKey(next.Name)
	cur, err := s.cfg.Storage.Get(ctx, key)
	if err != nil || strconv.FormatInt(cur.Revision, 10) != live.ResourceVersion {
		return nil, false, nil
	}
	spec, ok := storedSpec(live, cur.Value)
	if !ok {
		return nil, false, nil
	}
	meta, status, err := encodeMetaAndStatus(next)
	if err != nil {
		return nil, true, apierrors.NewInternalError(err)
	}
	data := make([]byte, 0, len(crdJSONStart)+len(meta)+len(spec)+len(status)+len(`,"spec":,"status":}`))
	data = append(append(append(append(append(append(append(data, crdJSONStart...), meta...), `,"spec":`...), spec...), `,"status":`...), status...), '}')
	rev := cur.Revision
	// As writeCRD (etcd3's GuaranteedUpdate): bytes already stored are not written again.
	if !bytes.Equal(cur.Value, data) {
		if rev, err = s.cfg.Storage.Update(ctx, key, data, cur.Revision); err != nil {
			switch {
			case errors.Is(err, storage.ErrConflict), errors.Is(err, storage.ErrNotFound):
				return nil, true, errLostRace(crdGR, next.Name)
			}
			return nil, true, storageWriteError(err)
		}
	}
	out = &apiextensionsv1.CustomResourceDefinition{Spec: live.Spec}
	if err := json.Unmarshal(meta, &out.ObjectMeta); err != nil {
		return nil, true, fmt.Errorf("%s: %w", key, err)
	}
	if err := json.Unmarshal(status, &out.Status); err != nil {
		return nil, true, fmt.Errorf("%s: %w", key, err)
	}
	out.ResourceVersion = strconv.FormatInt(rev, 10)
	out.APIVersion, out.Kind = crdGVK.GroupVersion().String(), crdGVK.Kind
	s.rememberSpec(out, spec)
	return out, true, nil
}

// encodeMetaAndStatus encodes a CRD's metadata (without resourceVersion) and status as encodeCRD does.
func encodeMetaAndStatus(crd *apiextensionsv1.CustomResourceDefinition) (meta, status []byte, err error) {
	m := crd.ObjectMeta
	m.ResourceVersion = ""
	if meta, err = json.Marshal(&m); err != nil {
		return nil, nil, err
	}
	status, err = json.Marshal(&crd.Status)
	return meta, status, err
}

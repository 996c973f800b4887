package apiserver

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/features"
	apistorage "k8s.io/apiserver/pkg/storage"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/utils/ptr"

	"crdplay/engine/storage"
)

// DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential asks for the deletion of an object that cannot
// be read from storage. Feature AllowUnsafeMalformedObjectDeletion is on by default from 1.37: with it on, the
// DELETE handler gives such a request the registry's corrupt-object deleter
// (k8s.io/apiserver pkg/registry/generic/registry/corrupt_obj_deleter.go) and DELETECOLLECTION refuses it; with
// it off (emulating 1.36 or older) the handlers clear the option before validating the options, so it does
// nothing.

// dropUnsafeDeleteOption clears the option when the gate is off, as both delete handlers do.
func dropUnsafeDeleteOption(opts *metav1.DeleteOptions) {
	if !utilfeature.DefaultFeatureGate.Enabled(features.AllowUnsafeMalformedObjectDeletion) {
		opts.IgnoreStoreReadErrorWithClusterBreakingPotential = nil
	}
}

// ignoresReadErrors reports whether opts ask for the unsafe deletion of an unreadable object.
func ignoresReadErrors(opts *metav1.DeleteOptions) bool {
	return opts != nil && ptr.Deref(opts.IgnoreStoreReadErrorWithClusterBreakingPotential, false)
}

// errUnsafeDeleteCollection is DELETECOLLECTION's refusal of the option, as the handler words it.
func errUnsafeDeleteCollection() error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", field.ErrorList{
		field.Invalid(field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"), true, "is not allowed with DELETECOLLECTION, try again after removing the option"),
	})
}

// unsafeDelete is the corrupt-object deleter: it deletes the object at key only if it cannot be decoded, without
// preconditions, finalizers or admission, and refuses one that decodes with a 409, as etcd3's store does when
// it reads the object expecting a decode error (getState with expectTransformOrDecodeError; the Conflict is
// storeerr.InterpretDeleteError's answer to the InvalidObj StorageError). In a dry run nothing is deleted. The
// answer is the Status the DELETE handler builds when the deleter returns no object.
func unsafeDelete(ctx context.Context, st storage.Interface, gr schema.GroupResource, kind, key, name string, decodes func(storage.Object) error, dryRun bool) (reply, error) {
	if err := checkKeyName(name); err != nil {
		return reply{}, err
	}
	for {
		o, err := st.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			return reply{}, apierrors.NewNotFound(gr, name)
		}
		if err != nil {
			return reply{}, storageUnavailable(err)
		}
		if decodes(o) == nil {
			return reply{}, apierrors.NewConflict(gr, name, apistorage.NewInvalidObjError(key, "unsafe deletion is not allowed because the object is decodable from storage"))
		}
		if !dryRun {
			if _, err := st.Delete(ctx, key, o.Revision); errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
				// Written or deleted since the read: the store's delete reads it again.
				continue
			} else if err != nil {
				return reply{}, storageWriteError(err)
			}
		}
		return reply{code: http.StatusOK, obj: &metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusSuccess,
			Code:     http.StatusOK,
			Details:  &metav1.StatusDetails{Name: name, Kind: kind},
		}}, nil
	}
}

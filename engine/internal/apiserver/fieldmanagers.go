package apiserver

import (
	"fmt"
	"reflect"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"crdplay/engine/internal/crds"
	"crdplay/internal/fieldmanager"
)

// managerOrUserAgent names the field manager of a write (fieldmanager.Name).
func managerOrUserAgent(manager, userAgent string) string {
	return fieldmanager.Name(manager, userAgent)
}

// crdFieldManagers returns the field managers of the CRD endpoint and its /status. They are built on first
// use rather than at package initialisation: building them (the CRD's OpenAPI models turned into a
// structured-merge-diff type converter) allocates about 1 MB, which in the browser made a garbage collection
// and a good part of the engine's start-up, before any CRD was written.
var crdFieldManagers = sync.OnceValue(func() (fms struct {
	main, status *managedfields.FieldManager
	err          error
}) {
	fms.main, fms.err = crds.NewFieldManager("")
	if fms.err == nil {
		fms.status, fms.err = crds.NewFieldManager("status")
	}
	return fms
})

// crdFieldManager is the field manager of the CRD endpoint, or of its /status.
func crdFieldManager(status bool) *managedfields.FieldManager {
	if status {
		return crdFieldManagers().status
	}
	return crdFieldManagers().main
}

// trackManagedFields records a write by manager in the CRD's managedFields.
//
// The field manager reads both objects whole (a copy of each, a reflection walk that marshals every nested
// schema again) to find the fields the write set or changed; for a 2.8 MB CRD that is most of a status write.
// Two parts of a CRD cannot change the answer, so it is handed the objects without them and they are put back
// in its result: the schemas under spec.versions when live has no versions (a create: that atomic list is
// added whole, whatever its elements hold, and records as "f:versions": {}), and the whole spec when live and
// obj have the same one (a controller's status write: an unchanged spec adds nothing to any manager's fields
// and takes nothing from them). TestTrackManagedFieldsLight holds this to the full objects' answer.
func trackManagedFields(fm *managedfields.FieldManager, live, obj *apiextensionsv1.CustomResourceDefinition, manager string) (*apiextensionsv1.CustomResourceDefinition, error) {
	if crdFieldManagers().err != nil {
		return nil, crdFieldManagers().err
	}
	spec := obj.Spec
	switch {
	case len(live.Spec.Versions) == 0 && len(obj.Spec.Versions) > 0:
		o := *obj
		o.Spec.Versions = make([]apiextensionsv1.CustomResourceDefinitionVersion, len(obj.Spec.Versions))
		obj = &o
	case sameSpec(&live.Spec, &obj.Spec):
		l, o := *live, *obj
		l.Spec, o.Spec = apiextensionsv1.CustomResourceDefinitionSpec{}, apiextensionsv1.CustomResourceDefinitionSpec{}
		live, obj = &l, &o
	}
	out, ok := fm.UpdateNoErrors(live, obj, manager).(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("field manager returned an unexpected object")
	}
	out.Spec = spec
	return out, nil
}

// sameSpec reports whether two specs are the same: versions held in the same array (a status write shares the
// live spec's) and every other field equal.
func sameSpec(a, b *apiextensionsv1.CustomResourceDefinitionSpec) bool {
	if len(a.Versions) != len(b.Versions) || len(a.Versions) == 0 || &a.Versions[0] != &b.Versions[0] {
		return false
	}
	x, y := *a, *b
	x.Versions, y.Versions = nil, nil
	return reflect.DeepEqual(x, y)
}

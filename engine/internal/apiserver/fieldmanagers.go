package apiserver

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/managedfields"

	"crdplay/engine/internal/crds"
)

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

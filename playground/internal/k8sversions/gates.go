package k8sversions

import (
	"sync"

	apiextensionsfeatures "k8s.io/apiextensions-apiserver/pkg/features"
	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

var (
	gateMu     sync.Mutex
	gateMinors = map[featuregate.Feature]int{}
)

// gateMinor is the oldest minor from which gate is on by default in every minor up to Newest, by the gate's
// versioned specs as upstream registers them (evaluated by a feature gate emulating each minor, so
// upstream's own rules pick the spec); 0 when it is off by default in Newest.
func gateMinor(gate featuregate.Feature) int {
	gateMu.Lock()
	defer gateMu.Unlock()
	if m, ok := gateMinors[gate]; ok {
		return m
	}
	specs, ok := utilfeature.DefaultMutableFeatureGate.GetAllVersioned()[gate]
	m := 0
	if ok {
		for n := Newest(); n >= Oldest; n-- {
			if !gateOn(gate, specs, n) {
				break
			}
			m = n
		}
	}
	gateMinors[gate] = m
	return m
}

func gateOn(gate featuregate.Feature, specs featuregate.VersionedSpecs, minor int) bool {
	g := featuregate.NewVersionedFeatureGate(version.MajorMinor(1, uint(minor)))
	if err := g.AddVersioned(map[featuregate.Feature]featuregate.VersionedSpecs{gate: specs}); err != nil {
		return false
	}
	return g.Enabled(gate)
}

// The gates of the fields the CRD strategy drops while they are off (dropDisabledFields in
// k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition).
const (
	gateOptionalOldSelf  = apiextensionsfeatures.CRDValidationRatcheting
	gateSelectableFields = apiextensionsfeatures.CustomResourceFieldSelectors
)

package engine

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"

	"crdplay/engine/internal/apiserver"
)

// EmulatedVersions lists the Kubernetes minors the engine can emulate, oldest first ("1.34" ... "1.37"): the
// range kube-apiserver's --emulated-version accepts, from the floor of upstream's effective version (three
// minors below the binary) up to the binary version itself.
func EmulatedVersions() []string {
	probe := compatibility.DefaultBuildEffectiveVersion()
	binary := probe.BinaryVersion()
	var out []string
	for m := binary.Minor(); ; m-- {
		v := version.MajorMinor(binary.Major(), m)
		probe.SetEmulationVersion(v)
		if len(probe.Validate()) > 0 {
			break
		}
		out = append(out, v.String())
		if m == 0 {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// KubernetesVersion is the release the engine reproduces, as /version's gitVersion reports it whatever the
// emulated version.
const KubernetesVersion = apiserver.GitVersion

// emulation is the version applied to the process. Upstream keeps it in process-wide state (component-base's
// compatibility registry, the feature gates, the CEL environment's compatibility version, all read through
// package globals), so a process serves one emulated version: the first NewHandler sets it.
var emulation struct {
	sync.Mutex
	applied string
}

// Emulate applies the emulated version want ("" for the newest) to the process as kube-apiserver's
// --emulated-version does: the kube component's effective version gets the emulation version (and with it the
// minimum compatibility version, one minor below and no lower than the floor), and the feature gates follow
// both, as the registry's Set does after parsing the flag. DefaultCompatibilityVersion, which compiles new CEL
// expressions, reads the same effective version. It returns the minor applied ("1.35"). NewHandler calls it;
// callers that report the version before building an engine call it first. A version outside
// EmulatedVersions, or one other than the process already emulates, is an error.
func Emulate(want string) (string, error) {
	versions := EmulatedVersions()
	if len(versions) == 0 {
		return "", fmt.Errorf("emulated version %q is not supported: no version can be emulated", want)
	}
	if want == "" {
		want = versions[len(versions)-1]
	}
	if !slices.Contains(versions, want) {
		return "", fmt.Errorf("emulated version %q is not supported: crdplay emulates Kubernetes %s to %s", want, versions[0], versions[len(versions)-1])
	}
	emulation.Lock()
	defer emulation.Unlock()
	if emulation.applied != "" {
		if emulation.applied != want {
			return "", fmt.Errorf("emulated version %s: this process already emulates Kubernetes %s, and one process serves one emulated version (upstream keeps it process-wide)", want, emulation.applied)
		}
		return want, nil
	}
	ev, ok := compatibility.DefaultComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent).(basecompatibility.MutableEffectiveVersion)
	if !ok {
		return "", fmt.Errorf("emulated version %s: the %q component has no effective version to set", want, basecompatibility.DefaultKubeComponent)
	}
	ev.SetEmulationVersion(version.MustParse(want))
	if errs := ev.Validate(); len(errs) > 0 {
		return "", fmt.Errorf("emulated version %s: %v", want, errs)
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetEmulationVersionAndMinCompatibilityVersion(ev.EmulationVersion(), ev.MinCompatibilityVersion()); err != nil {
		return "", fmt.Errorf("emulated version %s: feature gates: %w", want, err)
	}
	emulation.applied = want
	return want, nil
}

package engine

import (
	"errors"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"

	"crdplay/engine/internal/apiserver"
)

// EmulatedVersions lists the Kubernetes minors the engine can emulate, oldest first ("1.34" ... "1.37"): the
// range kube-apiserver's --emulated-version accepts, from the floor of upstream's effective version (three
// minors below the binary) up to the binary version. The floor is read back from the effective version itself:
// it is also the floor of the minimum compatibility version, to which emulating 1.0 lowers that to.
func EmulatedVersions() []string {
	probe := compatibility.DefaultBuildEffectiveVersion()
	binary := probe.BinaryVersion()
	probe.SetEmulationVersion(version.MajorMinor(binary.Major(), 0))
	var out []string
	for m := probe.MinCompatibilityVersion().Minor(); m <= binary.Minor(); m++ {
		out = append(out, version.MajorMinor(binary.Major(), m).String())
	}
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
	// Errors are built without fmt and the lock is released without defer: this is in the page's wasm, where
	// each of those costs kilobytes.
	versions := EmulatedVersions()
	if len(versions) == 0 {
		return "", errors.New("emulated version " + strconv.Quote(want) + " is not supported: upstream's effective version allows none")
	}
	if want == "" {
		want = versions[len(versions)-1]
	}
	if !slices.Contains(versions, want) {
		return "", errors.New("emulated version " + strconv.Quote(want) + " is not supported: crdplay emulates Kubernetes " + versions[0] + " to " + versions[len(versions)-1])
	}
	emulation.Lock()
	applied := emulation.applied
	var err error
	if applied == "" {
		ev, ok := compatibility.DefaultComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent).(basecompatibility.MutableEffectiveVersion)
		if !ok {
			err = errors.New("no effective version of the kube component to set")
		} else {
			ev.SetEmulationVersion(version.MustParse(want))
			err = utilfeature.DefaultMutableFeatureGate.SetEmulationVersionAndMinCompatibilityVersion(ev.EmulationVersion(), ev.MinCompatibilityVersion())
		}
		if err == nil {
			applied, emulation.applied = want, want
		}
	}
	emulation.Unlock()
	switch {
	case err != nil:
		return "", errors.New("emulated version " + want + ": " + err.Error())
	case applied != want:
		return "", errors.New("emulated version " + want + ": this process already emulates Kubernetes " + applied + ", and one process serves one emulated version (upstream keeps it process-wide)")
	}
	return want, nil
}

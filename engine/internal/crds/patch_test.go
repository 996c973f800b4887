package crds

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// liveCRD is a stored CRD as the REST layer holds it: decoded, defaulted, with system metadata.
func liveCRD(t testing.TB) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd, _, err := Decode([]byte(goodCRD), "application/json", "")
	if err != nil {
		t.Fatal(err)
	}
	crd.UID, crd.ResourceVersion, crd.Generation = "d0c0ffee-0000-0000-0000-000000000000", "7", 1
	crd.Finalizers = []string{"customresourcecleanup.apiextensions.k8s.io"}
	return crd
}

// FuzzStrategicMergePatch feeds arbitrary patches to StrategicMergePatch with every directive: it must never
// panic (upstream's strategicpatch rejects malformed directives with errors), and must return an object or an
// error, never both nor neither.
func FuzzStrategicMergePatch(f *testing.F) {
	for _, seed := range []string{"{}", "[]", "null", `"s"`, `{"metadata":{"labels":{"a":"b","a":"c"}}}`,
		`{"metadata":{"finalizers":["x"],"$deleteFromPrimitiveList/finalizers":["customresourcecleanup.apiextensions.k8s.io"]}}`,
		`{"metadata":{"ownerReferences":[{"uid":"u","$patch":"delete"}],"$setElementOrder/ownerReferences":[{"uid":"u"}]}}`,
		`{"spec":{"versions":[{"name":"v1","$patch":"replace"}],"bogus":1}}`, `{"metadata":{"labels":{"$patch":"bogus"}}}`,
		`{"spec":{"$retainKeys":["group"],"group":"x"}}`, `{"spec":{"versions":null,"names":{"kind":7}}}`} {
		f.Add([]byte(seed), uint8(0))
	}
	directives := []string{"", "Warn", "Strict", "Ignore"}
	live := liveCRD(f)
	f.Fuzz(func(t *testing.T, patch []byte, dir uint8) {
		crd, _, err := StrategicMergePatch(live.DeepCopy(), patch, directives[int(dir)%len(directives)])
		if (crd == nil) == (err == nil) {
			t.Fatalf("object %v and error %v", crd, err)
		}
	})
}

// FuzzDecodePatched feeds arbitrary patch results to DecodePatched with every directive: never a panic, an
// object or an error.
func FuzzDecodePatched(f *testing.F) {
	for _, seed := range []string{goodCRD, unknownCRD, "{}", "[]", "null", `"s"`, `{"kind":"Status","apiVersion":"v1"}`} {
		f.Add([]byte(seed), uint8(0))
	}
	directives := []string{"", "Warn", "Strict", "Ignore"}
	f.Fuzz(func(t *testing.T, patched []byte, dir uint8) {
		crd, _, err := DecodePatched(patched, nil, directives[int(dir)%len(directives)])
		if (crd == nil) == (err == nil) {
			t.Fatalf("object %v and error %v", crd, err)
		}
	})
}

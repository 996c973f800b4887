//go:build !js

package apiserver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"crdplay/engine/storage"
)

// storedResultCRD is a CRD whose schema gives the decode of stored objects work to do: defaults (one on status,
// which a create drops and the read puts back), a nullable and a non-nullable field, an embedded resource, a
// list-map, int-or-string, preserved unknown fields and pruning.
const storedResultCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"things.example.com","uid":"u1","resourceVersion":"1"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"things","singular":"thing","kind":"Thing","listKind":"ThingList"},
"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},"schema":{"openAPIV3Schema":{"type":"object","properties":{
 "spec":{"type":"object","properties":{
  "size":{"type":"integer","default":3},
  "ratio":{"type":"number"},
  "name":{"type":"string","default":"x"},
  "maybe":{"type":"string","nullable":true},
  "never":{"type":"string"},
  "port":{"x-kubernetes-int-or-string":true},
  "items":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"},"v":{"type":"string","default":"d"}}}},
  "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
  "embedded":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true},
  "defaultEmbedded":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,
   "default":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","labels":{},"creationTimestamp":"2026-01-02T03:04:05.123Z"}}}}},
 "status":{"type":"object","default":{"phase":"New"},"properties":{"phase":{"type":"string"}}}}}}},
 {"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]},
"status":{"acceptedNames":{"plural":"things","singular":"thing","kind":"Thing","listKind":"ThingList"},"storedVersions":["v1"]}}`

// storedResultObjects are objects of storedResultCRD to write; each is also tried without its metadata's
// extras. Floats and strings that are not UTF-8 take the codec's whole decode; the others the copy.
var storedResultObjects = []string{
	`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","namespace":"default"}}`,
	`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","namespace":"default","generation":1,"uid":"x","creationTimestamp":"2026-01-02T03:04:05Z","labels":{"a":"b"},"annotations":{"n":"<&>\u2028"},"finalizers":["f/g"],"ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"u","controller":true}],
	 "managedFields":[{"manager":"m","operation":"Update","apiVersion":"example.com/v1","time":"2026-01-02T03:04:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:size":{}}}}]},
	 "spec":{"size":5,"name":"n","maybe":null,"never":null,"port":"http","items":[{"k":"a"},{"k":"b","v":"w"}],"free":{"x":[1,"two",true,null,{"y":{}}],"e":[]},"embedded":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","junk":1},"data":{"k":"v"}},"unknown":1},"extra":{"z":1},"status":{"phase":"Old"}}`,
	`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","namespace":"default","labels":null,"annotations":{},"junk":"j"},"spec":null,"status":null}`,
	`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","namespace":"default","generation":"one"},"spec":{"size":"big","port":8080,"items":"no"}}`,
	`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","namespace":"default"},"spec":{"ratio":0.5,"size":2}}`,
	`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","namespace":"default"},"spec":{"free":{"n":1e3,"m":-0.0,"big":9223372036854775807,"small":-9223372036854775808}}}`,
	`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","namespace":"default"},"spec":{"embedded":{"metadata":{"name":7}}}}`,
}

// TestStoredResultCopy: the answer of a write built from a copy of the written object (storedResult) is the
// codec's decode of the stored bytes, over storedResultCRD's objects (and with values the copy declines), the
// corpus's examples and the oracle cases' objects; and encode writes it as encoding/json's Encoder does.
func TestStoredResultCopy(t *testing.T) {
	type object struct {
		name string
		crd  *apiextensionsv1.CustomResourceDefinition
		obj  map[string]interface{}
	}
	crd := readCRD(t, []byte(storedResultCRD))
	var objects []object
	for i, o := range storedResultObjects {
		m := map[string]interface{}{}
		if err := utiljson.Unmarshal([]byte(o), &m); err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		objects = append(objects, object{"thing " + string(rune('a'+i)), crd, m})
	}
	// Strings that are not UTF-8 cannot come from a JSON body, but the encoder would change them.
	objects = append(objects, object{"not UTF-8", crd, map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Thing",
		"metadata": map[string]interface{}{"name": "a", "annotations": map[string]interface{}{"bad": "\xff\xfe"}}, "spec": map[string]interface{}{"name": "\xc3"}}})
	for _, dir := range []string{"../../../testdata/corpus/*/*", "../../../testdata/oracle/*"} {
		cases, _ := filepath.Glob(dir)
		for _, c := range cases {
			data, err := os.ReadFile(filepath.Join(c, "crd.yaml"))
			if err != nil {
				continue
			}
			crd := readCRD(t, firstDocument(data))
			files, _ := filepath.Glob(filepath.Join(c, "*.yaml"))
			for _, f := range files {
				if strings.HasSuffix(f, "crd.yaml") {
					continue
				}
				data, _ := os.ReadFile(f)
				for _, doc := range bytes.Split(data, []byte("\n---")) {
					j, err := yaml.YAMLToJSON(doc)
					m := map[string]interface{}{}
					if err != nil || utiljson.Unmarshal(j, &m) != nil || m["kind"] != crd.Spec.Names.Kind {
						continue
					}
					objects = append(objects, object{f, crd, m})
				}
			}
		}
	}
	if len(objects) < 40 {
		t.Fatalf("only %d objects", len(objects))
	}
	copied := 0
	for _, o := range objects {
		ci, err := newCRDInfo(o.crd, nil)
		if err != nil {
			continue // a CRD the server would not accept, or not serve
		}
		for _, v := range o.crd.Spec.Versions {
			vi := ci.versions[v.Name]
			if vi == nil {
				continue
			}
			r := &crRequest{ci: ci, vi: vi}
			for _, decoded := range []bool{false, true} {
				written := &unstructured.Unstructured{Object: runtimeDeepCopy(o.obj)}
				written.SetAPIVersion(vi.kind.GroupVersion().String())
				written.SetNamespace("default")
				if decoded {
					// As a create writes it: decoded from its body (coerced, defaulted in its version).
					body, _ := json.Marshal(written.Object)
					into := &unstructured.Unstructured{}
					into.SetGroupVersionKind(vi.kind)
					out, _, err := ci.requestDecoder(false, false, vi.kind.GroupVersion()).Decode(body, nil, into)
					if err != nil {
						continue
					}
					written = out.(*unstructured.Unstructured)
				}
				data, err := r.encodeOwnedForStorage(written)
				if err != nil {
					continue // not JSON (the codec's encode fails first)
				}
				if codecData, err := runtime.Encode(r.vi.requestCodec, written); err != nil || !bytes.Equal(data, codecData) {
					t.Errorf("%s, %s: stored %s\nthe codec's %s, %v", o.name, v.Name, data, codecData, err)
				}
				if c, ok := jsonCopy(written.Object, 1); ok && v.Name == ci.storageVersion {
					if _, ok := r.decodeParsed(c.(map[string]interface{})); ok {
						copied++
					}
				}
				got, gotErr := r.storedResult(data, 42, written)
				want, wantErr := r.decodeStored(storage.Object{Value: data, Revision: 42})
				if (gotErr != nil) != (wantErr != nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
					t.Errorf("%s, %s: error %v, want %v", o.name, v.Name, gotErr, wantErr)
					continue
				}
				if gotErr != nil {
					continue
				}
				if !reflect.DeepEqual(got, want) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					t.Errorf("%s, %s:\n got %s\nwant %s", o.name, v.Name, g, w)
				}
				// The answer's encoding is the Encoder's.
				var buf bytes.Buffer
				if err := json.NewEncoder(&buf).Encode(want); err != nil {
					t.Fatal(err)
				}
				if body, err := encode(got, false); err != nil || !bytes.Equal(body, buf.Bytes()) {
					t.Errorf("%s, %s: encode: %s, %v\nwant %s", o.name, v.Name, body, err, buf.Bytes())
				}
			}
		}
	}
	if copied < len(objects)/2 {
		t.Errorf("the copy served %d of %d objects", copied, len(objects))
	}
	t.Logf("%d objects, %d decoded from the copy", len(objects), copied)
}

// TestJSONCopy: jsonCopy declines what a JSON round trip changes, and copies the rest as the round trip does.
func TestJSONCopy(t *testing.T) {
	deep := map[string]interface{}{}
	for i, m := 0, deep; i < jsonMaxDepth+5; i++ {
		n := map[string]interface{}{}
		m["d"] = n
		m = n
	}
	for _, tc := range []struct {
		name string
		in   interface{}
		ok   bool
	}{
		{"json values", map[string]interface{}{"s": "é\u2028<>", "i": int64(-3), "b": true, "n": nil, "a": []interface{}{int64(1), "x", map[string]interface{}{}}, "e": []interface{}{}}, true},
		{"typed nils", map[string]interface{}{"m": map[string]interface{}(nil), "a": []interface{}(nil)}, true},
		{"float", map[string]interface{}{"f": 1.0}, false},
		{"int", map[string]interface{}{"i": 1}, false},
		{"strings", map[string]interface{}{"s": []string{"a"}}, false},
		{"invalid value", map[string]interface{}{"s": "\xff"}, false},
		{"invalid key", map[string]interface{}{"\xff": "s"}, false},
		{"too deep", deep, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := jsonCopy(tc.in, 1)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			data, err := json.Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]interface{}{}
			if err := utiljson.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("copy %#v\nround trip %#v", got, want)
			}
		})
	}
}

// FuzzStoredResultCopy: for any object of storedResultCRD, storedResult's answer is the codec's decode of the
// stored bytes.
func FuzzStoredResultCopy(f *testing.F) {
	for _, o := range storedResultObjects {
		f.Add([]byte(o))
	}
	crd := readCRD(f, []byte(storedResultCRD))
	ci, err := newCRDInfo(crd, nil)
	if err != nil {
		f.Fatal(err)
	}
	r := &crRequest{ci: ci, vi: ci.versions["v1"]}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := map[string]interface{}{}
		if utiljson.Unmarshal(data, &m) != nil {
			return
		}
		written := &unstructured.Unstructured{Object: m}
		written.SetAPIVersion("example.com/v1")
		written.SetKind("Thing")
		if _, ok := m["metadata"].(map[string]interface{}); !ok {
			return // every object written has metadata (its name)
		}
		check := func(written *unstructured.Unstructured) {
			stored, err := r.encodeOwnedForStorage(written)
			if err != nil {
				return
			}
			got, gotErr := r.storedResult(stored, 42, written)
			want, wantErr := r.decodeStored(storage.Object{Value: stored, Revision: 42})
			if (gotErr != nil) != (wantErr != nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("error %v, want %v", gotErr, wantErr)
			}
			if gotErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
		}
		// As a create writes it (decoded from its body: coerced and defaulted), and as it is.
		if body, err := json.Marshal(written.Object); err == nil {
			into := &unstructured.Unstructured{}
			into.SetGroupVersionKind(r.vi.kind)
			if out, _, err := ci.requestDecoder(false, false, r.vi.kind.GroupVersion()).Decode(body, nil, into); err == nil {
				check(out.(*unstructured.Unstructured))
			}
		}
		check(written)
	})
}

func readCRD(t testing.TB, data []byte) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	if crd.Status.AcceptedNames.Kind == "" {
		crd.Status.AcceptedNames = crd.Spec.Names
		if crd.Status.AcceptedNames.ListKind == "" {
			crd.Status.AcceptedNames.ListKind = crd.Spec.Names.Kind + "List"
		}
	}
	return crd
}

func firstDocument(data []byte) []byte {
	docs := bytes.Split(data, []byte("\n---"))
	for _, d := range docs {
		if bytes.Contains(d, []byte("CustomResourceDefinition")) {
			return d
		}
	}
	return docs[0]
}

func runtimeDeepCopy(m map[string]interface{}) map[string]interface{} {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

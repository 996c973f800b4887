//go:build !js

package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// jsonEncoderBytes is what the unstructured JSON scheme writes for v: encoding/json's Encoder.
func jsonEncoderBytes(t testing.TB, v interface{}) ([]byte, bool) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// TestAppendJSON: appendJSON writes encoding/json's bytes for the unstructured JSON types, and declines the rest.
func TestAppendJSON(t *testing.T) {
	cyclic := map[string]interface{}{}
	cyclic["me"] = cyclic
	for _, tc := range []struct {
		name string
		in   interface{}
		ok   bool
	}{
		{"empty", map[string]interface{}{}, true},
		{"scalars", map[string]interface{}{"s": "x", "i": int64(-9223372036854775808), "t": true, "f": false, "n": nil}, true},
		{"escapes", map[string]interface{}{"s": "\"\\/\b\f\n\r\t\x00\x1f\x7f<>&'\u2028\u2029é😀\ufffd", "<&>": "k"}, true},
		{"not UTF-8", map[string]interface{}{"s": "a\xffb\xc3", "\xfe": int64(1)}, true},
		{"nested", map[string]interface{}{"b": []interface{}{int64(1), "two", []interface{}{}, map[string]interface{}{"z": nil, "a": []interface{}{nil}}}, "a": map[string]interface{}{}}, true},
		{"typed nils", map[string]interface{}{"m": map[string]interface{}(nil), "a": []interface{}(nil)}, true},
		{"key order", map[string]interface{}{"b": int64(1), "B": int64(2), "a": int64(3), "aa": int64(4), "": int64(5), "é": int64(6), "z": int64(7)}, true},
		{"float", map[string]interface{}{"f": 1.5}, false},
		{"int", map[string]interface{}{"i": 1}, false},
		{"strings", map[string]interface{}{"s": []string{"a"}}, false},
		{"cycle", cyclic, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := appendJSON(nil, tc.in, 1)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			want, _ := jsonEncoderBytes(t, tc.in)
			if got = append(got, '\n'); !bytes.Equal(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

// TestAppendJSONCorpus: appendJSON writes encoding/json's bytes for the corpus's and the oracle cases' objects.
func TestAppendJSONCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../../testdata/corpus/*/*/*.yaml")
	cases, _ := filepath.Glob("../../../testdata/oracle/*/*.yaml")
	n := 0
	for _, f := range append(files, cases...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			j, err := yaml.YAMLToJSON(doc)
			m := map[string]interface{}{}
			if err != nil || utiljson.Unmarshal(j, &m) != nil {
				continue
			}
			want, ok := jsonEncoderBytes(t, m)
			got, gotOK := appendJSON(nil, m, 1)
			if !ok || !gotOK {
				continue // floats
			}
			n++
			if got = append(got, '\n'); !bytes.Equal(got, want) {
				t.Errorf("%s:\ngot  %s\nwant %s", f, got, want)
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d objects written", n)
	}
	t.Logf("%d objects", n)
}

// FuzzAppendJSON: for any JSON object, decoded as the unstructured JSON scheme decodes it, appendJSON writes
// encoding/json's bytes or declines.
func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,"x",null,true,{"b":{}}],"c":"<\u2028>"}`, `{"s":"\ud800"}`, `{"f":1.5,"i":-0}`, `{"é":"\u0000\u001f"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range []string{string(data), `{"k":"` + strings.ToValidUTF8(string(data), "") + `"}`} {
			m := map[string]interface{}{}
			if utiljson.Unmarshal([]byte(in), &m) != nil {
				continue
			}
			want, ok := jsonEncoderBytes(t, m)
			got, gotOK := appendJSON(nil, m, 1)
			if !ok || !gotOK {
				continue
			}
			if got = append(got, '\n'); !bytes.Equal(got, want) {
				t.Fatalf("got  %q\nwant %q", got, want)
			}
		}
		// Raw bytes as a string value and a key: what JSON cannot carry (bytes that are not UTF-8).
		m := map[string]interface{}{"v": string(data), string(data): int64(1)}
		want, _ := jsonEncoderBytes(t, m)
		got, _ := appendJSON(nil, m, 1)
		if got = append(got, '\n'); !bytes.Equal(got, want) {
			t.Fatalf("got  %q\nwant %q", got, want)
		}
	})
}

// doneAfter is a context that reports being past its deadline from the (n+1)th look at it on: a deadline that
// passes while the encoder works, at a point the test chooses rather than at a time.
type doneAfter struct {
	context.Context
	n     int
	looks int
}

func (c *doneAfter) Err() error {
	if c.looks++; c.looks > c.n {
		return context.DeadlineExceeded
	}
	return nil
}

// TestAppendJSONList: appendJSONList writes the unstructured JSON scheme's bytes for a list (its fields and
// items, keys sorted), declines what appendJSON declines, and stops once the request's context is done, without
// encoding the items after that.
func TestAppendJSONList(t *testing.T) {
	item := func(i int) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]interface{}{"name": fmt.Sprintf("w%04d", i), "namespace": "default"}, "spec": map[string]interface{}{"<size>": "L & M"}}}
	}
	list := func(n int, fields map[string]interface{}) *unstructured.UnstructuredList {
		l := &unstructured.UnstructuredList{Object: fields}
		for i := 0; i < n; i++ {
			l.Items = append(l.Items, item(i))
		}
		return l
	}
	meta := func() map[string]interface{} {
		return map[string]interface{}{"apiVersion": "example.com/v1", "kind": "WidgetList",
			"metadata": map[string]interface{}{"resourceVersion": "12", "continue": "abc", "remainingItemCount": int64(3)}}
	}
	for _, tc := range []struct {
		name string
		in   *unstructured.UnstructuredList
		ok   bool
	}{
		{"empty", list(0, meta()), true},
		{"no fields", list(2, nil), true},
		{"items", list(300, meta()), true},
		{"a nil item", &unstructured.UnstructuredList{Object: meta(), Items: []unstructured.Unstructured{{}}}, true},
		{"a float", &unstructured.UnstructuredList{Object: map[string]interface{}{"x": 1.5}}, false},
		{"an item's float", &unstructured.UnstructuredList{Items: []unstructured.Unstructured{{Object: map[string]interface{}{"x": 1.5}}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := appendJSONList(context.Background(), nil, tc.in)
			if err != nil || ok != tc.ok {
				t.Fatalf("ok %v, %v; want %v", ok, err, tc.ok)
			}
			if !ok {
				return
			}
			want, _ := jsonEncoderBytes(t, tc.in)
			if got = append(got, '\n'); !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	t.Run("context done", func(t *testing.T) {
		const n = 10000
		ctx := &doneAfter{Context: context.Background(), n: 2}
		got, ok, err := appendJSONList(ctx, nil, list(n, meta()))
		if ok || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ok %v, %v; want the context's error", ok, err)
		}
		// Alive at items 0 and listContextCheck, done at 2*listContextCheck: nothing after was encoded.
		if encoded := bytes.Count(got, []byte(`"kind":"Widget"`)); encoded != 2*listContextCheck {
			t.Errorf("%d of %d items encoded, want %d", encoded, n, 2*listContextCheck)
		}
	})
}

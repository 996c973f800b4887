package crds

import (
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

const (
	goodCRD    = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"foos","kind":"Foo"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`
	unknownCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com","bogus":1},"spec":{"group":"example.com","group":"example.com","scope":"Namespaced","names":{"plural":"foos","kind":"Foo","junk":true},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","readOnly":true,"properties":{"a":{"type":"string","xml":{}}}}}}]}}`
	dupYAML    = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
  bogus: 1
spec:
  group: example.com
  group: example.com
  scope: Namespaced
  scope: Namespaced
  names: {plural: foos, kind: Foo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, readOnly: true}
`
)

// TestDecode checks Decode against responses of the oracle server to the same bodies (POST with
// dryRun=All): status code, message and warnings.
func TestDecode(t *testing.T) {
	unknownWarnings := []string{
		`unknown field "metadata.bogus"`,
		`duplicate field "spec.group"`,
		`unknown field "spec.names.junk"`,
		`unknown field "spec.versions[0].schema.openAPIV3Schema.readOnly"`,
		`unknown field "spec.versions[0].schema.openAPIV3Schema.properties.a.xml"`,
	}
	tests := []struct {
		name, body, contentType, directive string
		code                               int32 // 0: decodes
		message                            string
		warnings                           []string
	}{
		{name: "json", body: goodCRD, contentType: "application/json"},
		{name: "content type parameters", body: goodCRD, contentType: "application/json; charset=utf-8"},
		{name: "no content type means json", body: goodCRD},
		{name: "kind and apiVersion default to the endpoint's", body: `{"metadata":{"name":"foos.example.com"},"spec":{"group":"example.com"}}`, contentType: "application/json"},
		{name: "unknown and duplicate fields warn", body: unknownCRD, contentType: "application/json", warnings: unknownWarnings},
		{name: "Warn is the default", body: unknownCRD, contentType: "application/json", directive: "Warn", warnings: unknownWarnings},
		{name: "Ignore drops them", body: unknownCRD, contentType: "application/json", directive: "Ignore"},
		{
			name: "Strict rejects them", body: unknownCRD, contentType: "application/json", directive: "Strict", code: 400,
			message: `CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: strict decoding error: unknown field "metadata.bogus", duplicate field "spec.group", unknown field "spec.names.junk", unknown field "spec.versions[0].schema.openAPIV3Schema.readOnly", unknown field "spec.versions[0].schema.openAPIV3Schema.properties.a.xml"`,
		},
		{
			name: "yaml duplicate keys warn line by line", body: dupYAML, contentType: "application/yaml",
			warnings: []string{
				`line 8: key "group" already set in map`,
				`line 10: key "scope" already set in map`,
				`unknown field "metadata.bogus"`,
				`unknown field "spec.versions[0].schema.openAPIV3Schema.readOnly"`,
			},
		},
		{
			name: "yaml Strict", body: dupYAML, contentType: "application/yaml", directive: "Strict", code: 400,
			message: "CustomResourceDefinition in version \"v1\" cannot be handled as a CustomResourceDefinition: strict decoding error: yaml: unmarshal errors:\n  line 8: key \"group\" already set in map\n  line 10: key \"scope\" already set in map, unknown field \"metadata.bogus\", unknown field \"spec.versions[0].schema.openAPIV3Schema.readOnly\"",
		},
		{
			name: "unsupported directive", body: goodCRD, contentType: "application/json", directive: "Bogus", code: 422,
			message: `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"`,
		},
		{
			name: "unsupported media type", body: goodCRD, contentType: "text/plain", code: 415,
			message: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
		},
		{
			name: "unknown kind", body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"Foo","metadata":{"name":"x"}}`, contentType: "application/json", code: 400,
			message: `Foo in version "v1" cannot be handled as a CustomResourceDefinition: no kind "Foo" is registered for version "apiextensions.k8s.io/v1" in scheme "pkg/runtime/scheme.go:111"`,
		},
		{
			name: "other kind of the scheme", body: `{"apiVersion":"v1","kind":"Status"}`, contentType: "application/json", code: 400,
			message: `Status in version "v1" cannot be handled as a CustomResourceDefinition: converting (v1.Status) to (apiextensions.CustomResourceDefinition): unknown conversion`,
		},
		{
			name: "v1beta1", contentType: "application/json", code: 400,
			body:    `{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"foos","kind":"Foo"},"version":"v1"}}`,
			message: "the API version in the data (apiextensions.k8s.io/v1beta1) does not match the expected API version (apiextensions.k8s.io/v1)",
		},
		{
			name: "malformed json", body: "{not json\n", contentType: "application/json", code: 400,
			message: "the object provided is unrecognized (must be of type CustomResourceDefinition): couldn't get version/kind; json parse error: invalid character 'n' looking for beginning of object key string ({not json\n)",
		},
		{
			name: "empty body", body: "", contentType: "application/json", code: 400,
			message: "the object provided is unrecognized (must be of type CustomResourceDefinition): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)",
		},
		{
			name: "array", body: "[]\n", contentType: "application/json", code: 400,
			message: `the object provided is unrecognized (must be of type CustomResourceDefinition): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } (5b5d0a)`,
		},
		{
			name: "wrong type", body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"},"spec":{"versions":"x"}}`, contentType: "application/json", code: 400,
			message: `CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: json: cannot unmarshal string into Go struct field CustomResourceDefinitionSpec.spec.versions of type []v1.CustomResourceDefinitionVersion`,
		},
		{
			name: "malformed yaml", body: "apiVersion: [\n", contentType: "application/yaml", code: 400,
			message: "the object provided is unrecognized (must be of type CustomResourceDefinition): yaml: line 1: did not find expected node content (61706956657273696f6e3a205b0a)",
		},
		{
			name: "not protobuf", body: "\x0a\x0b", contentType: "application/vnd.kubernetes.protobuf", code: 400,
			message: "the object provided is unrecognized (must be of type CustomResourceDefinition): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (0a0b)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crd, warnings, err := Decode([]byte(tc.body), tc.contentType, tc.directive)
			if !equalStrings(warnings, tc.warnings) {
				t.Errorf("warnings\n got: %q\nwant: %q", warnings, tc.warnings)
			}
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if crd.Kind != "CustomResourceDefinition" || crd.APIVersion != "apiextensions.k8s.io/v1" {
					t.Errorf("TypeMeta = %+v", crd.TypeMeta)
				}
				return
			}
			se, ok := err.(*apierrors.StatusError)
			if !ok {
				t.Fatalf("got %T %v, want a StatusError", err, err)
			}
			if se.ErrStatus.Code != tc.code || se.ErrStatus.Message != tc.message {
				t.Errorf("got %d %q\nwant %d %q", se.ErrStatus.Code, se.ErrStatus.Message, tc.code, tc.message)
			}
		})
	}
}

// TestDecodeDefaults checks the v1 defaults applied on decode and that JSON values keep their spelling
// until Canonicalize.
func TestDecodeDefaults(t *testing.T) {
	body := strings.Replace(goodCRD, `{"type":"object"}`, `{"type":"object","properties":{"x":{"type":"integer","default":1.0}}}`, 1)
	crd, _, err := Decode([]byte(body), "application/json", "")
	if err != nil {
		t.Fatal(err)
	}
	n := crd.Spec.Names
	if n.Singular != "foo" || n.ListKind != "FooList" {
		t.Errorf("names not defaulted: %+v", n)
	}
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != "None" {
		t.Errorf("conversion not defaulted: %+v", crd.Spec.Conversion)
	}
	if !equalStrings(crd.Status.StoredVersions, []string{"v1"}) {
		t.Errorf("storedVersions = %q", crd.Status.StoredVersions)
	}
	def := func() string { return string(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["x"].Default.Raw) }
	if def() != "1.0" {
		t.Errorf("default before Canonicalize = %s", def())
	}
	Canonicalize(crd)
	if def() != "1" {
		t.Errorf("default after Canonicalize = %s", def())
	}
	if _, err := json.Marshal(crd); err != nil {
		t.Fatal(err)
	}
}

// FuzzDecode feeds arbitrary bodies to Decode with every content type and directive: it must never
// panic, and must return either an object or a StatusError.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{goodCRD, unknownCRD, dupYAML, "", "{}", "[]", "null", `{"kind":"Status","apiVersion":"v1"}`,
		`{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","spec":{"validation":{"openAPIV3Schema":{"default":{}}}}}`,
		`{"spec":{"versions":[{"schema":{"openAPIV3Schema":{"default":1e999,"enum":[null],"items":[{}]}}}]}}`} {
		f.Add([]byte(seed), uint8(0), uint8(0))
	}
	contentTypes := []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf", ""}
	directives := []string{"", "Warn", "Strict", "Ignore"}
	f.Fuzz(func(t *testing.T, body []byte, ct, dir uint8) {
		crd, _, err := Decode(body, contentTypes[int(ct)%len(contentTypes)], directives[int(dir)%len(directives)])
		if err != nil {
			if _, ok := err.(*apierrors.StatusError); !ok {
				t.Fatalf("error %T %v is not a StatusError", err, err)
			}
			return
		}
		if crd == nil {
			t.Fatal("nil object without error")
		}
		// What the REST layer does next must not panic either.
		Canonicalize(crd)
		PrepareForCreate(crd)
		WarningsOnCreate(crd)
	})
}

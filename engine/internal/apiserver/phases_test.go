package apiserver

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestStorageVersionHash(t *testing.T) {
	// Recorded by the real server in testdata/oracle/categories-shortnames/expected/01-request-discovery-version.json.
	if got := storageVersionHash("stable.example.com", "v1", "CronTab"); got != "EdX2FP+L0js=" {
		t.Errorf("got %q", got)
	}
}

func TestErrorToStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		code   int32
		reason metav1.StatusReason
	}{
		{"api status", apierrors.NewNotFound(schema.GroupResource{Resource: "x"}, "n"), 404, metav1.StatusReasonNotFound},
		{"plain error is a 500 without reason", errors.New("boom"), 500, ""},
		{"wrapped api status", errors.Join(apierrors.NewBadRequest("bad")), 400, metav1.StatusReasonBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := errorToStatus(tc.err)
			if st.Code != tc.code || st.Reason != tc.reason || st.Kind != "Status" || st.APIVersion != "v1" || st.Status != metav1.StatusFailure {
				t.Errorf("got %+v", st)
			}
		})
	}
}

func TestWarningsHeaders(t *testing.T) {
	w := &warnings{}
	w.AddWarning("", "a")
	w.AddWarning("", "a")
	w.AddWarning("", "")
	w.AddWarning("", `say "hi"`)
	if got, want := w.headers(), []string{`299 - "a"`, `299 - "say \"hi\""`}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	long := &warnings{}
	for i := 0; i < 20; i++ {
		long.AddWarning("", strings.Repeat(string(rune('a'+i)), 1000))
	}
	for _, h := range long.headers() {
		if len(h) > 256+10 {
			t.Fatalf("item not truncated past the total limit: %d bytes", len(h))
		}
	}
}

func TestManagerOrUserAgent(t *testing.T) {
	for _, tc := range []struct{ manager, ua, want string }{
		{"mgr", "kubectl/v1.37", "mgr"},
		{"", "kubectl/v1.37.2 (linux/amd64)", "kubectl"},
		{"", "oracle/v0.37.2", "oracle"},
		{"", "bad\x01agent/1", "bad\uFFFDagent"},
		{"", strings.Repeat("x", 200), strings.Repeat("x", 128)},
	} {
		if got := managerOrUserAgent(tc.manager, tc.ua); got != tc.want {
			t.Errorf("managerOrUserAgent(%q, %q) = %q, want %q", tc.manager, tc.ua, got, tc.want)
		}
	}
}

func TestGCFinalizers(t *testing.T) {
	pol := func(p metav1.DeletionPropagation) *metav1.DeletionPropagation { return &p }
	yes := true
	for _, tc := range []struct {
		name string
		in   []string
		opts metav1.DeleteOptions
		want []string
	}{
		{"no policy keeps finalizers", []string{"a/b"}, metav1.DeleteOptions{}, []string{"a/b"}},
		{"foreground adds foregroundDeletion", []string{"a/b"}, metav1.DeleteOptions{PropagationPolicy: pol(metav1.DeletePropagationForeground)}, []string{"a/b", "foregroundDeletion"}},
		{"orphan replaces foreground", []string{"foregroundDeletion"}, metav1.DeleteOptions{PropagationPolicy: pol(metav1.DeletePropagationOrphan)}, []string{"orphan"}},
		{"background removes both", []string{"orphan", "x/y", "foregroundDeletion"}, metav1.DeleteOptions{PropagationPolicy: pol(metav1.DeletePropagationBackground)}, []string{"x/y"}},
		{"orphanDependents", nil, metav1.DeleteOptions{OrphanDependents: &yes}, []string{"orphan"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gcFinalizers(tc.in, &tc.opts); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDefaultDeprecationWarning(t *testing.T) {
	spec := apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1alpha1", Served: true, Deprecated: true}, {Name: "v1beta1", Served: true}, {Name: "v1", Served: true}, {Name: "v2", Served: false},
		},
	}
	if got, want := defaultDeprecationWarning("v1alpha1", spec), "example.com/v1alpha1 Widget is deprecated; use example.com/v1 Widget"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := defaultDeprecationWarning("v2", spec), "example.com/v2 Widget is deprecated"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func structural(t *testing.T, props *apiextensionsinternal.JSONSchemaProps) *structuralschema.Structural {
	t.Helper()
	s, err := structuralschema.NewStructural(props)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCoercer(t *testing.T) {
	s := structural(t, &apiextensionsinternal.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsinternal.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsinternal.JSONSchemaProps{"a": {Type: "string"}, "n": {Type: "string"}}},
	}})
	c := coercer{structural: map[string]*structuralschema.Structural{"v1": s}, gk: schema.GroupKind{Group: "example.com", Kind: "Widget"}, returnUnknownPaths: true}
	for _, tc := range []struct {
		name    string
		in      map[string]interface{}
		want    map[string]interface{}
		unknown []string
	}{
		{"prunes unknown fields and reports them",
			map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]interface{}{"name": "w", "junk": 1}, "spec": map[string]interface{}{"a": "x", "b": "y"}, "extra": true},
			map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]interface{}{"name": "w"}, "spec": map[string]interface{}{"a": "x"}},
			[]string{"metadata.junk", "extra", "spec.b"}},
		{"drops non-nullable nulls",
			map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Widget", "spec": map[string]interface{}{"n": nil}},
			map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Widget", "spec": map[string]interface{}{}},
			nil},
		{"leaves other kinds alone",
			map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Other", "spec": map[string]interface{}{"b": 1}},
			map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Other", "spec": map[string]interface{}{"b": 1}},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: tc.in}
			unknown, err := c.apply(u)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(u.Object, tc.want) {
				t.Errorf("object: got %v, want %v", u.Object, tc.want)
			}
			if !reflect.DeepEqual(unknown, tc.unknown) {
				t.Errorf("unknown paths: got %q, want %q", unknown, tc.unknown)
			}
		})
	}
}

package crstrategy

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func obj(m map[string]interface{}) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

func TestFinalizerWarnings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		new, old []interface{}
		want     []string
	}{
		{"qualified name", []interface{}{"example.com/f"}, nil, nil},
		{"standard finalizer", []interface{}{"orphan", "kubernetes"}, nil, nil},
		// Text recorded by the real server in testdata/oracle/finalizers/expected/10-create-unqualified-finalizer.json.
		{"unqualified", []interface{}{"myfinalizer"}, nil, []string{`metadata.finalizers: "myfinalizer": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`}},
		{"dotted without path", []interface{}{"a.b"}, nil, []string{`metadata.finalizers: "a.b": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`}},
		{"only newly added ones", []interface{}{"myfinalizer"}, []interface{}{"myfinalizer"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := obj(map[string]interface{}{"metadata": map[string]interface{}{"finalizers": tc.new}})
			var o *unstructured.Unstructured
			if tc.old != nil {
				o = obj(map[string]interface{}{"metadata": map[string]interface{}{"finalizers": tc.old}})
			}
			var got []string
			if o == nil {
				got = finalizerWarnings(n, nil)
			} else {
				got = finalizerWarnings(n, o)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateReplicas(t *testing.T) {
	scale := &apiextensions.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}
	for _, tc := range []struct {
		name string
		in   map[string]interface{}
		want string
	}{
		{"valid", map[string]interface{}{"spec": map[string]interface{}{"replicas": int64(3)}}, ""},
		{"missing is fine", map[string]interface{}{}, ""},
		// The real server names the field with the path's leading dot (scale-subresource/08-scale-put-negative).
		{"negative", map[string]interface{}{"spec": map[string]interface{}{"replicas": int64(-1)}}, ".spec.replicas: Invalid value: -1: should be a non-negative integer"},
		{"too big", map[string]interface{}{"spec": map[string]interface{}{"replicas": int64(1) << 40}}, ".spec.replicas: Invalid value: 1099511627776: should be less than or equal to 2147483647"},
		{"wrong type", map[string]interface{}{"spec": map[string]interface{}{"replicas": "3"}}, ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 3 is of the type string, expected int64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateScaleSpec(obj(tc.in), scale)
			got := ""
			if len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBlockingError(t *testing.T) {
	for _, tc := range []struct {
		typ   field.ErrorType
		block bool
	}{
		{field.ErrorTypeRequired, true}, {field.ErrorTypeNotSupported, true}, {field.ErrorTypeTooLong, true},
		{field.ErrorTypeTooMany, true}, {field.ErrorTypeTypeInvalid, true}, {field.ErrorTypeInvalid, false}, {field.ErrorTypeForbidden, false},
	} {
		got := blockingError(field.ErrorList{{Type: tc.typ}}) != nil
		if got != tc.block {
			t.Errorf("%s: blocking = %v, want %v", tc.typ, got, tc.block)
		}
	}
}

func TestPrepareForUpdate(t *testing.T) {
	kind := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	withStatus := New(nil, true, kind, nil, nil, nil, &apiextensions.CustomResourceSubresourceStatus{}, nil, nil)
	without := New(nil, true, kind, nil, nil, nil, nil, nil, nil)
	old := func() *unstructured.Unstructured {
		return obj(map[string]interface{}{"metadata": map[string]interface{}{"generation": int64(3)}, "spec": map[string]interface{}{"a": "x"}, "status": map[string]interface{}{"s": "old"}})
	}
	for _, tc := range []struct {
		name       string
		st         *Strategy
		change     func(u *unstructured.Unstructured)
		generation int64
		status     interface{}
	}{
		{"spec change bumps generation", withStatus, func(u *unstructured.Unstructured) { u.Object["spec"] = map[string]interface{}{"a": "y"} }, 4, map[string]interface{}{"s": "old"}},
		{"status change is dropped with a status subresource", withStatus, func(u *unstructured.Unstructured) { u.Object["status"] = map[string]interface{}{"s": "new"} }, 3, map[string]interface{}{"s": "old"}},
		{"status change bumps generation without one", without, func(u *unstructured.Unstructured) { u.Object["status"] = map[string]interface{}{"s": "new"} }, 4, map[string]interface{}{"s": "new"}},
		{"metadata change does not bump", withStatus, func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "b"}) }, 3, map[string]interface{}{"s": "old"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := old()
			tc.change(n)
			tc.st.PrepareForUpdate(context.Background(), n, old())
			if n.GetGeneration() != tc.generation {
				t.Errorf("generation %d, want %d", n.GetGeneration(), tc.generation)
			}
			if !reflect.DeepEqual(n.Object["status"], tc.status) {
				t.Errorf("status %v, want %v", n.Object["status"], tc.status)
			}
		})
	}
}

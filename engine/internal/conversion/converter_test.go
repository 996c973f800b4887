package conversion

import (
	"encoding/json"
	"reflect"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crontabs returns a CRD with versions v1beta1 (storage) and v1 of
// example.com, like the one in the Kubernetes versioning docs.
func crontabs(strategy apiextensionsv1.ConversionStrategyType) *apiextensionsv1.CustomResourceDefinition {
	url := "https://127.0.0.1:1/crdconvert"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "crontabs.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "crontabs", Kind: "CronTab", ListKind: "CronTabList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1beta1", Served: true, Storage: true},
				{Name: "v1", Served: true},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: strategy},
		},
	}
	if strategy == apiextensionsv1.WebhookConverter {
		crd.Spec.Conversion.Webhook = &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url},
			ConversionReviewVersions: []string{"v1", "v1beta1"},
		}
	}
	return crd
}

func obj(apiVersion, name string, fields ...any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       "CronTab",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
	}}
	for i := 0; i+1 < len(fields); i += 2 {
		u.Object[fields[i].(string)] = fields[i+1]
	}
	return u
}

func list(apiVersion string, items ...*unstructured.Unstructured) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": apiVersion, "kind": "CronTabList"}}
	for _, it := range items {
		l.Items = append(l.Items, *it)
	}
	return l
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func gv(s string) schema.GroupVersion {
	g, err := schema.ParseGroupVersion(s)
	if err != nil {
		panic(err)
	}
	return g
}

func TestNopConversion(t *testing.T) {
	tests := []struct {
		name    string
		in      runtime.Object
		to      string
		want    runtime.Object
		wantErr string
	}{{
		name: "object",
		in:   obj("example.com/v1beta1", "a", "spec", map[string]any{"x": "y"}),
		to:   "example.com/v1",
		want: obj("example.com/v1", "a", "spec", map[string]any{"x": "y"}),
	}, {
		name: "same version",
		in:   obj("example.com/v1", "a"),
		to:   "example.com/v1",
		want: obj("example.com/v1", "a"),
	}, {
		name: "list with mixed items",
		in:   list("example.com/v1beta1", obj("example.com/v1beta1", "a"), obj("example.com/v1", "b")),
		to:   "example.com/v1",
		want: list("example.com/v1", obj("example.com/v1", "a"), obj("example.com/v1", "b")),
	}, {
		name: "empty list",
		in:   list("example.com/v1beta1"),
		to:   "example.com/v1",
		want: list("example.com/v1"),
	}, {
		name:    "invalid target version",
		in:      obj("example.com/v1beta1", "a"),
		to:      "example.com/v3",
		wantErr: "request to convert CR to an invalid group/version: example.com/v3",
	}, {
		name:    "invalid target group",
		in:      obj("example.com/v1beta1", "a"),
		to:      "other.com/v1",
		wantErr: `example.com/v1beta1, Kind=CronTab is unstructured and is not suitable for converting to "other.com/v1"`,
	}, {
		name:    "invalid source version",
		in:      obj("example.com/v2", "a"),
		to:      "example.com/v1",
		wantErr: "request to convert CR from an invalid group/version: example.com/v2",
	}, {
		name:    "invalid list item",
		in:      list("example.com/v1beta1", obj("example.com/v1beta1", "a"), obj("example.com/v3", "b")),
		to:      "example.com/v1",
		wantErr: "request to convert CR list failed, list index 1 has invalid group/version: example.com/v3",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			safe, unsafe, err := NewConverter(crontabs(apiextensionsv1.NoneConverter), nil)
			if err != nil {
				t.Fatal(err)
			}
			before := asJSON(t, tt.in)
			got, err := safe.ConvertToVersion(tt.in, gv(tt.to))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g, w := asJSON(t, got), asJSON(t, tt.want); g != w {
				t.Errorf("got %s\nwant %s", g, w)
			}
			if after := asJSON(t, tt.in); after != before {
				t.Errorf("safe converter modified its input:\n%s\nto\n%s", before, after)
			}

			// The unsafe converter is allowed to, and does, convert in place.
			got, err = unsafe.ConvertToVersion(tt.in, gv(tt.to))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.in {
				t.Errorf("unsafe converter returned a copy")
			}
		})
	}
}

func TestConvertInto(t *testing.T) {
	tests := []struct {
		name    string
		in, out any
		want    string
		wantErr string
	}{{
		name: "unstructured",
		in:   obj("example.com/v1beta1", "a"),
		out:  &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1"}},
		want: `{"apiVersion":"example.com/v1","kind":"CronTab","metadata":{"name":"a","namespace":"default"}}`,
	}, {
		name:    "not an object",
		in:      "text",
		out:     &unstructured.Unstructured{},
		wantErr: "input type string in not valid for object conversion",
	}, {
		name:    "typed input",
		in:      &metav1.Status{},
		out:     &unstructured.Unstructured{},
		wantErr: "input type *v1.Status in not valid for unstructured conversion to *unstructured.Unstructured",
	}, {
		name:    "typed output",
		in:      obj("example.com/v1beta1", "a"),
		out:     &metav1.Status{},
		wantErr: "output type *v1.Status in not valid for unstructured conversion from *unstructured.Unstructured",
	}, {
		name:    "invalid target",
		in:      obj("example.com/v1beta1", "a"),
		out:     &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v9"}},
		wantErr: "request to convert CR to an invalid group/version: example.com/v9",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			safe, _, err := NewConverter(crontabs(apiextensionsv1.NoneConverter), nil)
			if err != nil {
				t.Fatal(err)
			}
			err = safe.Convert(tt.in, tt.out, nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := asJSON(t, tt.out); got != tt.want {
				t.Errorf("got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestConvertFieldLabel(t *testing.T) {
	tests := []struct {
		name    string
		scope   apiextensionsv1.ResourceScope
		version string
		label   string
		ok      bool
	}{
		{"name", apiextensionsv1.NamespaceScoped, "v1", "metadata.name", true},
		{"namespace", apiextensionsv1.NamespaceScoped, "v1", "metadata.namespace", true},
		{"namespace of cluster-scoped", apiextensionsv1.ClusterScoped, "v1", "metadata.namespace", false},
		{"name of cluster-scoped", apiextensionsv1.ClusterScoped, "v1", "metadata.name", true},
		{"selectable field", apiextensionsv1.NamespaceScoped, "v1", "spec.color", true},
		{"selectable field with its dot", apiextensionsv1.NamespaceScoped, "v1", ".spec.color", false},
		{"selectable field of another version", apiextensionsv1.NamespaceScoped, "v1beta1", "spec.color", false},
		{"unknown version", apiextensionsv1.NamespaceScoped, "v7", "spec.color", false},
		{"other field", apiextensionsv1.NamespaceScoped, "v1", "spec.size", false},
		{"status", apiextensionsv1.NamespaceScoped, "v1", "status.phase", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := crontabs(apiextensionsv1.NoneConverter)
			crd.Spec.Scope = tt.scope
			crd.Spec.Versions[1].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}}
			safe, unsafe, err := NewConverter(crd, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []runtime.ObjectConvertor{safe, unsafe} {
				gvk := schema.GroupVersionKind{Group: "example.com", Version: tt.version, Kind: "CronTab"}
				label, value, err := c.ConvertFieldLabel(gvk, tt.label, "v")
				if tt.ok {
					if err != nil || label != tt.label || value != "v" {
						t.Errorf("got (%q, %q, %v), want (%q, \"v\", nil)", label, value, err, tt.label)
					}
					continue
				}
				want := "field label not supported: " + tt.label
				if err == nil || err.Error() != want || label != "" || value != "" {
					t.Errorf("got (%q, %q, %v), want error %q", label, value, err, want)
				}
			}
		})
	}
}

func TestScale(t *testing.T) {
	scale := func() *autoscalingv1.Scale {
		return &autoscalingv1.Scale{
			TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
			ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"},
			Spec:       autoscalingv1.ScaleSpec{Replicas: 3},
		}
	}
	withScale := crontabs(apiextensionsv1.NoneConverter)
	withScale.Spec.Versions[1].Subresources = &apiextensionsv1.CustomResourceSubresources{
		Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
	}

	t.Run("to version", func(t *testing.T) {
		safe, _, err := NewConverter(withScale, nil)
		if err != nil {
			t.Fatal(err)
		}
		in := scale()
		got, err := safe.ConvertToVersion(in, autoscalingv1.SchemeGroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, scale()) {
			t.Errorf("got %s", asJSON(t, got))
		}
		if got == runtime.Object(in) {
			t.Errorf("safe converter returned its input")
		}
	})
	t.Run("into unstructured", func(t *testing.T) {
		safe, _, err := NewConverter(withScale, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := &unstructured.Unstructured{}
		if err := safe.Convert(scale(), out, nil); err != nil {
			t.Fatal(err)
		}
		want := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"a","namespace":"default"},"spec":{"replicas":3},"status":{"replicas":0}}`
		if got := asJSON(t, out); got != want {
			t.Errorf("got %s\nwant %s", got, want)
		}
	})
	t.Run("without scale subresource", func(t *testing.T) {
		safe, _, err := NewConverter(crontabs(apiextensionsv1.NoneConverter), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = safe.ConvertToVersion(scale(), autoscalingv1.SchemeGroupVersion)
		want := "request to convert CR to an invalid group/version: autoscaling/v1"
		if err == nil || err.Error() != want {
			t.Errorf("error = %v, want %q", err, want)
		}
	})
}

func TestNewConverterErrors(t *testing.T) {
	pem := func(s string) []byte { return []byte(s) }
	tests := []struct {
		name    string
		edit    func(*apiextensionsv1.CustomResourceDefinition)
		wantErr string
	}{{
		name: "unknown strategy",
		edit: func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion.Strategy = "Magic"
		},
		wantErr: `unknown conversion strategy "Magic" for CRD crontabs.example.com`,
	}, {
		name: "no conversion is None",
		edit: func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion = nil
		},
	}, {
		name: "webhook without URL or service",
		edit: func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion.Webhook.ClientConfig.URL = nil
		},
		wantErr: `failed calling webhook "conversion_webhook_for_crontabs.example.com": webhook configuration must have either service or URL`,
	}, {
		name: "unparsable URL",
		edit: func(crd *apiextensionsv1.CustomResourceDefinition) {
			u := "https://[::1"
			crd.Spec.Conversion.Webhook.ClientConfig.URL = &u
		},
		wantErr: `failed calling webhook "conversion_webhook_for_crontabs.example.com": Unparsable URL: parse "https://[::1": missing ']' in host`,
	}, {
		name: "service",
		edit: func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion.Webhook.ClientConfig.URL = nil
			crd.Spec.Conversion.Webhook.ClientConfig.Service = &apiextensionsv1.ServiceReference{Namespace: "ns", Name: "conv"}
		},
	}, {
		name: "whitespace caBundle",
		edit: func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion.Webhook.ClientConfig.CABundle = pem(" \n\t")
		},
	}, {
		name: "caBundle not PEM",
		edit: func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion.Webhook.ClientConfig.CABundle = pem("not a certificate")
		},
		wantErr: "unable to load root certificates: unable to parse bytes as PEM block",
	}, {
		name: "caBundle without certificate",
		edit: func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion.Webhook.ClientConfig.CABundle = pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
		},
		wantErr: "unable to load root certificates: no valid certificate authority data seen",
	}, {
		name: "caBundle with broken certificate",
		edit: func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion.Webhook.ClientConfig.CABundle = pem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
		},
		wantErr: "unable to load root certificates: failed to parse certificate: x509: malformed certificate",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := crontabs(apiextensionsv1.WebhookConverter)
			tt.edit(crd)
			safe, unsafe, err := NewConverter(crd, nil)
			if tt.wantErr == "" {
				if err != nil || safe == nil || unsafe == nil {
					t.Fatalf("got (%v, %v, %v), want converters", safe, unsafe, err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if safe != nil || unsafe != nil {
				t.Errorf("converters returned with an error")
			}
		})
	}
}

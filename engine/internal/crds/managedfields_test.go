package crds

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// recordedFieldsV1 returns the fieldsV1 of the managedFields entry of manager/subresource in a recorded
// response body.
func recordedFieldsV1(t *testing.T, caseName, step, manager, subresource string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(oracleDir(t), caseName, "expected", step+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Body struct {
			Metadata struct {
				ManagedFields []struct {
					Manager     string          `json:"manager"`
					Subresource string          `json:"subresource"`
					FieldsV1    json.RawMessage `json:"fieldsV1"`
				} `json:"managedFields"`
			} `json:"metadata"`
		} `json:"body"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Body.Metadata.ManagedFields {
		if e.Manager == manager && e.Subresource == subresource {
			return compactJSON(t, e.FieldsV1)
		}
	}
	t.Fatalf("%s/%s: no managedFields entry for %s %q", caseName, step, manager, subresource)
	return ""
}

func compactJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v) // map keys come out sorted
	return string(out)
}

func ownFieldsV1(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, manager string) string {
	t.Helper()
	for _, e := range crd.ManagedFields {
		if e.Manager == manager {
			return compactJSON(t, e.FieldsV1.Raw)
		}
	}
	t.Fatalf("no managedFields entry for %s in %+v", manager, crd.ManagedFields)
	return ""
}

// TestTypeConverterManagedFields builds the field manager by hand from TypeConverter, as the CRD
// endpoint does, and checks the fieldsV1 it records against the oracle: the create of basic-crontab's
// crd.yaml ("f:versions": {} since versions is atomic) and the controllers' status write
// (conditions keyed by type).
func TestTypeConverterManagedFields(t *testing.T) {
	tc, err := TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	gvk := apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
	newManager := func(subresource string) *managedfields.FieldManager {
		fm, err := managedfields.NewDefaultFieldManager(tc, scheme, scheme, scheme, gvk, apiextensionsv1.SchemeGroupVersion,
			subresource, fieldpath.NewExcludeFilterSetMap(ResetFields(subresource)))
		if err != nil {
			t.Fatal(err)
		}
		return fm
	}

	y, err := os.ReadFile(filepath.Join(oracleDir(t), "basic-crontab", "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd, _, err := Decode(y, "application/yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	created := newManager("").UpdateNoErrors(&apiextensionsv1.CustomResourceDefinition{}, crd, "oracle").(*apiextensionsv1.CustomResourceDefinition)
	if got, want := ownFieldsV1(t, created, "oracle"), recordedFieldsV1(t, "basic-crontab", "00-crd", "oracle", ""); got != want {
		t.Errorf("create fieldsV1\n got: %s\nwant: %s", got, want)
	}

	// The stored object has a reset status; the controllers then write theirs through /status.
	PrepareForCreate(created)
	status, _ := ComputeStatus(created, nil, metav1.NewTime(time.Now()))
	withStatus := created.DeepCopy()
	withStatus.Status = status
	settled := newManager("status").UpdateNoErrors(created, withStatus, "kube-apiserver").(*apiextensionsv1.CustomResourceDefinition)
	if got, want := ownFieldsV1(t, settled, "kube-apiserver"), recordedFieldsV1(t, "basic-crontab", "04-get-crd", "kube-apiserver", "status"); got != want {
		t.Errorf("status fieldsV1\n got: %s\nwant: %s", got, want)
	}
	if len(settled.ManagedFields) != 2 {
		t.Errorf("managedFields entries: %+v", settled.ManagedFields)
	}
}

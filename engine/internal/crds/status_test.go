package crds

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recordedCRD reads the CRD in a recorded response body.
func recordedCRD(t *testing.T, caseName, step string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(oracleDir(t), caseName, "expected", step+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r recording
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	// Placeholders are not timestamps: drop them, the tests that use this look at other fields.
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatal(err)
	}
	stripPlaceholders(m)
	raw, _ := json.Marshal(m)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func stripPlaceholders(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if s, ok := c.(string); ok && s == "<timestamp>" {
				delete(t, k)
				continue
			}
			stripPlaceholders(c)
		}
	case []any:
		for _, c := range t {
			stripPlaceholders(c)
		}
	}
}

// recordedStatus returns the status of the CRD in a recorded response body, as recorded.
func recordedStatus(t *testing.T, caseName, step string) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(oracleDir(t), caseName, "expected", step+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Body struct {
			Status json.RawMessage `json:"status"`
		} `json:"body"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r.Body.Status
}

func TestComputeStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t.Run("basic-crontab: a new CRD is accepted and established", func(t *testing.T) {
		created := recordedCRD(t, "basic-crontab", "00-crd")
		want := recordedStatus(t, "basic-crontab", "04-get-crd")
		got, changed := ComputeStatus(created, []*apiextensionsv1.CustomResourceDefinition{created}, now)
		if !changed {
			t.Error("changed = false for a new CRD")
		}
		compareJSON(t, got, want)
		for _, c := range got.Conditions {
			if !c.LastTransitionTime.Equal(&now) {
				t.Errorf("%s lastTransitionTime = %v, want now", c.Type, c.LastTransitionTime)
			}
		}
		settled := created.DeepCopy()
		settled.Status = got
		if _, changed := ComputeStatus(settled, nil, now); changed {
			t.Error("a settled CRD changes again")
		}
		if !IsEstablished(settled) || !Served(settled, "v1") || Served(settled, "v2") || IsEstablished(created) || Served(created, "v1") {
			t.Error("IsEstablished/Served disagree with the conditions")
		}
	})

	t.Run("categories-shortnames: conflicting kind and shortName", func(t *testing.T) {
		first := recordedCRD(t, "categories-shortnames", "06-get-crd")
		second := recordedCRD(t, "categories-shortnames", "07-create-crd-conflicting-names")
		want := recordedStatus(t, "categories-shortnames", "08-get-crd-conflicting")
		all := []*apiextensionsv1.CustomResourceDefinition{first, second}
		got, changed := ComputeStatus(second, all, now)
		if !changed {
			t.Error("changed = false")
		}
		compareJSON(t, got, want)
		if _, changed := ComputeStatus(first, all, now); changed {
			t.Error("the CRD holding the names changed")
		}
		blocked := second.DeepCopy()
		blocked.Status = got
		if Served(blocked, "v1") || IsEstablished(blocked) {
			t.Error("a CRD whose names are not accepted is served")
		}

		// Deleting the first CRD frees the names: the second is accepted and established, keeping the
		// names it already had.
		later := metav1.NewTime(now.Add(time.Minute))
		changedCRDs := Reconcile([]*apiextensionsv1.CustomResourceDefinition{blocked}, later)
		if len(changedCRDs) != 1 {
			t.Fatalf("Reconcile changed %d CRDs", len(changedCRDs))
		}
		freed := changedCRDs[0]
		if freed.Status.AcceptedNames.Kind != "CronTab" || len(freed.Status.AcceptedNames.ShortNames) != 1 || !IsEstablished(freed) {
			t.Errorf("names not accepted after the conflict went away: %+v", freed.Status)
		}
		na := findCondition(freed, apiextensionsv1.NamesAccepted)
		if na.Reason != "NoConflicts" || !na.LastTransitionTime.Equal(&later) {
			t.Errorf("NamesAccepted = %+v", na)
		}
	})

	t.Run("lastTransitionTime moves only with the status", func(t *testing.T) {
		crd := recordedCRD(t, "basic-crontab", "00-crd")
		status, _ := ComputeStatus(crd, nil, now)
		crd.Status = status
		crd.Spec.Names.ShortNames = []string{"ct", "cts"}
		later := metav1.NewTime(now.Add(time.Hour))
		status, changed := ComputeStatus(crd, nil, later)
		if !changed || len(status.AcceptedNames.ShortNames) != 2 {
			t.Fatalf("new shortName not accepted: %+v", status.AcceptedNames)
		}
		for _, c := range status.Conditions {
			if !c.LastTransitionTime.Equal(&now) {
				t.Errorf("%s lastTransitionTime moved to %v without a status change", c.Type, c.LastTransitionTime)
			}
		}
	})

	t.Run("conditions removed through /status are not restored", func(t *testing.T) {
		// Recorded on the oracle: neither the naming nor the establishing controller reacts, since the
		// names already match and NamesAccepted is no longer True.
		crd := recordedCRD(t, "basic-crontab", "04-get-crd")
		crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{}
		if _, changed := ComputeStatus(crd, nil, now); changed {
			t.Error("controllers rewrote a status they leave alone upstream")
		}
		if Served(crd, "v1") {
			t.Error("served without conditions")
		}
	})

	t.Run("protected group", func(t *testing.T) {
		crd := recordedCRD(t, "basic-crontab", "00-crd")
		crd.Spec.Group = "foo.k8s.io"
		crd.Annotations = map[string]string{apiextensionsv1.KubeAPIApprovedAnnotation: "unapproved, testing"}
		status, _ := ComputeStatus(crd, nil, now)
		var types []string
		for _, c := range status.Conditions {
			types = append(types, string(c.Type))
		}
		if !equalStrings(types, []string{"NamesAccepted", "Established", "KubernetesAPIApprovalPolicyConformant"}) {
			t.Errorf("conditions %q", types)
		}
		c := status.Conditions[2]
		if c.Status != "False" || c.Reason != "UnapprovedAnnotation" || c.Message != `not approved: "unapproved, testing"` {
			t.Errorf("approval condition %+v", c)
		}
	})

	t.Run("invalid caBundle keeps the CRD from being established", func(t *testing.T) {
		crd := recordedCRD(t, "basic-crontab", "00-crd")
		url := "https://127.0.0.1:1/convert"
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: []byte("not a certificate")},
				ConversionReviewVersions: []string{"v1"},
			},
		}
		status, _ := ComputeStatus(crd, nil, now)
		crd.Status = status
		est := findCondition(crd, apiextensionsv1.Established)
		if est.Status != "False" || est.Reason != "InvalidCABundle" || est.Message != "The conversion webhook CABundle is invalid" {
			t.Errorf("Established = %+v", est)
		}
		if !Served(crd, "v1") {
			t.Error("the handler serves a CRD whose names are accepted")
		}
		if _, changed := ComputeStatus(crd, nil, now); changed {
			t.Error("the verdict repeats as a change")
		}
	})
}

func findCondition(crd *apiextensionsv1.CustomResourceDefinition, typ apiextensionsv1.CustomResourceDefinitionConditionType) apiextensionsv1.CustomResourceDefinitionCondition {
	for _, c := range crd.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return apiextensionsv1.CustomResourceDefinitionCondition{}
}

package engine_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCRDDeletePreconditions: the CRD registry's Delete checks the uid and the resourceVersion preconditions, in
// its own words ("precondition failed: ..."), and a failed one leaves the CRD as it was. The answers were
// recorded from the oracle; they name the CRD's uid and resourceVersion, which differ between servers, so the
// test fills in the engine's (an oracle case cannot hold them: its normalisation leaves messages alone).
func TestCRDDeletePreconditions(t *testing.T) {
	const crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com"
	const conflict = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on customresourcedefinitions.apiextensions.k8s.io \"crontabs.stable.example.com\": precondition failed: %s","reason":"Conflict","details":{"name":"crontabs.stable.example.com","group":"apiextensions.k8s.io","kind":"customresourcedefinitions"},"code":409}`
	for _, tc := range []struct {
		name, body, want string
	}{
		{"uid", `{"preconditions":{"uid":"wrong"}}`, "UID in precondition: wrong, UID in object meta: <uid>"},
		{"resourceVersion", `{"preconditions":{"resourceVersion":"1"}}`, "ResourceVersion in precondition: 1, ResourceVersion in object meta: <rv>"},
		{"both: uid first", `{"preconditions":{"uid":"wrong","resourceVersion":"1"}}`, "UID in precondition: wrong, UID in object meta: <uid>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newCronTabEngine(t, nil)
			meta := func() (uid, rv string, deleting bool) {
				var got struct {
					Metadata struct {
						UID, ResourceVersion string
						DeletionTimestamp    *string
					}
				}
				rec := do(h, "GET", crd, "", nil)
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatalf("GET: %d %s", rec.Code, rec.Body)
				}
				return got.Metadata.UID, got.Metadata.ResourceVersion, got.Metadata.DeletionTimestamp != nil
			}
			uid, rv, _ := meta()
			want := strings.Replace(conflict, "%s", strings.NewReplacer("<uid>", uid, "<rv>", rv).Replace(tc.want), 1)
			rec := do(h, "DELETE", crd, "application/json", []byte(tc.body))
			if rec.Code != 409 || strings.TrimSpace(rec.Body.String()) != want {
				t.Errorf("DELETE: %d %s\nwant 409 %s", rec.Code, rec.Body, want)
			}
			if _, after, deleting := meta(); after != rv || deleting {
				t.Errorf("after the failed delete: resourceVersion %s (was %s), being deleted: %v; want the CRD unchanged", after, rv, deleting)
			}
		})
	}
}

package conversion

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// FuzzWebhookResponse feeds arbitrary answers to the webhook converter, for
// a single object and for a list, in both review versions. Any error is
// fine; a panic is not. "%UID%" in the input becomes the request uid so that
// the fuzzer can get past the uid check to the per-object checks.
func FuzzWebhookResponse(f *testing.F) {
	f.Add(false, []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"%UID%","result":{"status":"Success"},"convertedObjects":[{"apiVersion":"example.com/v1","kind":"CronTab","metadata":{"name":"a","namespace":"default","uid":"uid-a","labels":{"x":"y"}}}]}}`))
	f.Add(false, []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"%UID%","result":{"status":"Success"},"convertedObjects":[{"apiVersion":"example.com/v1","kind":"CronTab","metadata":{"name":"c","namespace":"default","annotations":{"a":1}}},{"apiVersion":"example.com/v1","kind":"CronTab","metadata":[]}]}}`))
	f.Add(true, []byte(`{"response":{"result":{"status":"Success"},"convertedObjects":[{"apiVersion":"example.com/v1","kind":"CronTab","metadata":{"name":"a","namespace":"default","uid":"uid-a"}}]}}`))
	f.Add(true, []byte("apiVersion: apiextensions.k8s.io/v1beta1\nkind: ConversionReview\nresponse:\n  result: {status: Failure, message: no}\n"))
	f.Add(false, []byte("k8s\x00\n\x1a\n\x19apiextensions.k8s.io/v1\x12\x10ConversionReview"))
	f.Add(false, []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"%UID%","result":{"status":"Success"},"convertedObjects":[null, 1, "x"]}}`))
	f.Add(false, []byte(`{`))
	f.Add(false, []byte(``))

	f.Fuzz(func(t *testing.T, beta bool, answer []byte) {
		versions := []string{"v1"}
		if beta {
			versions = []string{"v1beta1"}
		}
		call := func(_ context.Context, _ apiextensionsv1.WebhookClientConfig, review []byte) ([]byte, error) {
			var r struct {
				Request struct{ UID string }
			}
			if err := json.Unmarshal(review, &r); err != nil {
				t.Fatalf("engine sent invalid JSON: %v", err)
			}
			return bytes.ReplaceAll(answer, []byte("%UID%"), []byte(r.Request.UID)), nil
		}
		crd := crontabs(apiextensionsv1.WebhookConverter)
		crd.Spec.Conversion.Webhook.ConversionReviewVersions = versions
		safe, _, err := NewConverter(crd, call)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = safe.ConvertToVersion(stored("a"), gv("example.com/v1"))
		in := list("example.com/v1beta1",
			obj("example.com/v1beta1", "a"),
			obj("example.com/v1", "b"),
			obj("example.com/v1beta1", "c"))
		_, _ = safe.ConvertToVersion(in, gv("example.com/v1"))
	})
}

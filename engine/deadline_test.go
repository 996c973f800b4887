package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"crdplay/engine"
)

// countingConverter is a conversion webhook that converts by setting apiVersion, counts the reviews it is sent,
// and calls giveUp once it has answered after of them: a request's deadline passing while the engine converts
// a list, at a point the test chooses rather than at a time.
type countingConverter struct {
	mu     sync.Mutex
	calls  int
	after  int
	giveUp func()
}

func (c *countingConverter) Call(_ context.Context, _ apiextensionsv1.WebhookClientConfig, body []byte) ([]byte, error) {
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, err
	}
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, o := range review.Request.Objects {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(o.Raw, &u.Object); err != nil {
			return nil, err
		}
		u.SetAPIVersion(review.Request.DesiredAPIVersion)
		raw, err := json.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: raw})
	}
	review.Request, review.Response = nil, resp
	c.mu.Lock()
	c.calls++
	if c.calls == c.after && c.giveUp != nil {
		c.giveUp()
	}
	c.mu.Unlock()
	return json.Marshal(&review)
}

// TestListStopsWhenRequestGone: a LIST whose request's context is done while its objects are being decoded
// (converted by a webhook here, which counts them) stops decoding well before the end, and answers with the
// deadline's 504, which the server's timeout filter has given already; with a context that stays alive, every
// object is converted and listed. One done after the last object is converted gets no Table made either. The
// server's filter is what cancels the context at the deadline; here the webhook does it after a conversion the
// case chooses.
func TestListStopsWhenRequestGone(t *testing.T) {
	const n = 500
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
	for _, tc := range []struct {
		name     string
		after    int // the conversion after which the context is done; 0 for never
		accept   string
		code     int
		maxCalls int
	}{
		{"context alive", 0, "", 200, n},
		{"context alive, a Table", 0, table, 200, n},
		{"context done during the list", 5, "", 504, n / 2},
		{"context done at the last object, a Table", n, table, 504, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conv := &countingConverter{after: tc.after}
			h, err := engine.NewHandler(engine.Options{Webhook: conv})
			if err != nil {
				t.Fatal(err)
			}
			do := func(ctx context.Context, method, path, body string) (int, string) {
				req := httptest.NewRequest(method, path, strings.NewReader(body)).WithContext(ctx)
				req.Header.Set("Content-Type", "application/json")
				if method == "GET" && tc.accept != "" {
					req.Header.Set("Accept", tc.accept)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				return w.Code, w.Body.String()
			}
			ctx := context.Background()
			crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets","singular":"widget","kind":"Widget"},"scope":"Namespaced",
"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://converter.example.com/convert"}}},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},{"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
			if code, body := do(ctx, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd); code != 201 {
				t.Fatalf("CRD: %d %s", code, body)
			}
			for i := 0; i < n; i++ {
				w := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w%04d"}}`, i)
				if code, body := do(ctx, "POST", "/apis/example.com/v1/namespaces/default/widgets", w); code != 201 {
					t.Fatalf("widget %d: %d %s", i, code, body)
				}
			}
			conv.mu.Lock()
			conv.calls = 0
			conv.mu.Unlock()
			listCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			if tc.after > 0 {
				conv.giveUp = cancel
			}
			code, body := do(listCtx, "GET", "/apis/example.com/v2/namespaces/default/widgets", "")
			if code != tc.code {
				t.Errorf("LIST: %d, want %d\n%.300s", code, tc.code, body)
			}
			if code == 504 {
				var st metav1.Status
				if err := json.Unmarshal([]byte(body), &st); err != nil || st.Reason != metav1.StatusReasonTimeout {
					t.Errorf("LIST: %s, want the Timeout Status", body)
				}
			}
			if code == 200 && tc.accept == "" && strings.Count(body, `"apiVersion":"example.com/v2","kind":"Widget"`) != n {
				t.Errorf("LIST: not every object converted:\n%.300s", body)
			}
			if code == 200 && tc.accept == table && strings.Count(body, `"cells":`) != n {
				t.Errorf("LIST: not a row per object:\n%.300s", body)
			}
			conv.mu.Lock()
			defer conv.mu.Unlock()
			if conv.calls > tc.maxCalls {
				t.Errorf("%d of %d objects converted, want at most %d", conv.calls, n, tc.maxCalls)
			}
		})
	}
}

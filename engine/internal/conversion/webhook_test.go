package conversion

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// fakeWebhook is a WebhookFunc that converts CronTabs correctly between
// v1beta1 (hostPort: "h:p") and v1 (host, port), answering in the review
// version it was asked in. edit breaks the answer for error cases.
type fakeWebhook struct {
	edit func(review map[string]any)
	body []byte // returned verbatim when set
	err  error

	calls    int
	raw      []byte
	cfg      apiextensionsv1.WebhookClientConfig
	deadline time.Duration
	request  map[string]any
}

func (f *fakeWebhook) call(ctx context.Context, cfg apiextensionsv1.WebhookClientConfig, body []byte) ([]byte, error) {
	f.calls++
	f.raw = body
	f.cfg = cfg
	if d, ok := ctx.Deadline(); ok {
		f.deadline = time.Until(d)
	}
	var review map[string]any
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, err
	}
	f.request = review
	if f.err != nil {
		return nil, f.err
	}
	if f.body != nil {
		return f.body, nil
	}
	req := review["request"].(map[string]any)
	desired := req["desiredAPIVersion"].(string)
	var converted []any
	for _, o := range req["objects"].([]any) {
		m := o.(map[string]any)
		m["apiVersion"] = desired
		if desired == "example.com/v1" {
			if hp, ok := m["hostPort"].(string); ok {
				host, port, _ := strings.Cut(hp, ":")
				m["host"], m["port"] = host, port
				delete(m, "hostPort")
			}
		} else if host, ok := m["host"].(string); ok {
			m["hostPort"] = host + ":" + m["port"].(string)
			delete(m, "host")
			delete(m, "port")
		}
		converted = append(converted, m)
	}
	answer := map[string]any{
		"apiVersion": review["apiVersion"],
		"kind":       "ConversionReview",
		"response": map[string]any{
			"uid":              req["uid"],
			"result":           map[string]any{"status": "Success"},
			"convertedObjects": converted,
		},
	}
	if f.edit != nil {
		f.edit(answer)
	}
	return json.Marshal(answer)
}

func (f *fakeWebhook) uid() string {
	return f.request["request"].(map[string]any)["uid"].(string)
}

func response(review map[string]any) map[string]any {
	return review["response"].(map[string]any)
}

func converted(review map[string]any, i int) map[string]any {
	return response(review)["convertedObjects"].([]any)[i].(map[string]any)
}

func metadata(review map[string]any, i int) map[string]any {
	return converted(review, i)["metadata"].(map[string]any)
}

// stored is a CronTab as storage holds it: full metadata, old version.
func stored(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1beta1",
		"kind":       "CronTab",
		"metadata": map[string]any{
			"name":              name,
			"namespace":         "default",
			"uid":               "uid-" + name,
			"resourceVersion":   "7",
			"generation":        int64(1),
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"labels":            map[string]any{"app": "cron"},
			"annotations":       map[string]any{"note": "stored"},
		},
		"hostPort": "localhost:1234",
	}}
}

func newTestConverter(t *testing.T, f *fakeWebhook, reviewVersions ...string) runtime.ObjectConvertor {
	t.Helper()
	crd := crontabs(apiextensionsv1.WebhookConverter)
	if len(reviewVersions) > 0 {
		crd.Spec.Conversion.Webhook.ConversionReviewVersions = reviewVersions
	}
	var call WebhookFunc
	if f != nil {
		call = f.call
	}
	safe, _, err := NewConverter(crd, call)
	if err != nil {
		t.Fatal(err)
	}
	return safe
}

func TestWebhookRoundTrip(t *testing.T) {
	tests := []struct {
		name          string
		versions      []string
		wantReview    string
		in            runtime.Object
		to            string
		want          string
		wantSent      int
		wantNoRequest bool
	}{{
		name:       "v1 review",
		versions:   []string{"v1", "v1beta1"},
		wantReview: "apiextensions.k8s.io/v1",
		in:         stored("a"),
		to:         "example.com/v1",
		wantSent:   1,
		want:       `{"apiVersion":"example.com/v1","host":"localhost","kind":"CronTab","metadata":{"annotations":{"note":"stored"},"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"labels":{"app":"cron"},"name":"a","namespace":"default","resourceVersion":"7","uid":"uid-a"},"port":"1234"}`,
	}, {
		name:       "v1beta1 review",
		versions:   []string{"v1beta1", "v1"},
		wantReview: "apiextensions.k8s.io/v1beta1",
		in:         stored("a"),
		to:         "example.com/v1",
		wantSent:   1,
		want:       `{"apiVersion":"example.com/v1","host":"localhost","kind":"CronTab","metadata":{"annotations":{"note":"stored"},"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"labels":{"app":"cron"},"name":"a","namespace":"default","resourceVersion":"7","uid":"uid-a"},"port":"1234"}`,
	}, {
		name:       "unknown review versions are skipped",
		versions:   []string{"v2", "v1beta1"},
		wantReview: "apiextensions.k8s.io/v1beta1",
		in:         stored("a"),
		to:         "example.com/v1",
		wantSent:   1,
		want:       `{"apiVersion":"example.com/v1","host":"localhost","kind":"CronTab","metadata":{"annotations":{"note":"stored"},"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"labels":{"app":"cron"},"name":"a","namespace":"default","resourceVersion":"7","uid":"uid-a"},"port":"1234"}`,
	}, {
		name:       "list sends only other versions",
		versions:   []string{"v1"},
		wantReview: "apiextensions.k8s.io/v1",
		in: list("example.com/v1beta1",
			obj("example.com/v1beta1", "a", "hostPort", "h1:1"),
			obj("example.com/v1", "b", "host", "h2", "port", "2"),
			obj("example.com/v1beta1", "c", "hostPort", "h3:3")),
		to:       "example.com/v1",
		wantSent: 2,
		want:     `{"apiVersion":"example.com/v1","items":[{"apiVersion":"example.com/v1","host":"h1","kind":"CronTab","metadata":{"name":"a","namespace":"default"},"port":"1"},{"apiVersion":"example.com/v1","host":"h2","kind":"CronTab","metadata":{"name":"b","namespace":"default"},"port":"2"},{"apiVersion":"example.com/v1","host":"h3","kind":"CronTab","metadata":{"name":"c","namespace":"default"},"port":"3"}],"kind":"CronTabList"}`,
	}, {
		name:          "list already converted",
		versions:      []string{"v1"},
		in:            list("example.com/v1beta1", obj("example.com/v1", "b", "host", "h2")),
		to:            "example.com/v1",
		wantNoRequest: true,
		want:          `{"apiVersion":"example.com/v1","items":[{"apiVersion":"example.com/v1","host":"h2","kind":"CronTab","metadata":{"name":"b","namespace":"default"}}],"kind":"CronTabList"}`,
	}, {
		name:          "object already converted",
		versions:      []string{"v1"},
		in:            obj("example.com/v1", "b", "host", "h2"),
		to:            "example.com/v1",
		wantNoRequest: true,
		want:          `{"apiVersion":"example.com/v1","host":"h2","kind":"CronTab","metadata":{"name":"b","namespace":"default"}}`,
	}, {
		name:          "empty object is nop-converted",
		versions:      []string{"v1"},
		in:            &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1beta1", "kind": "CronTab"}},
		to:            "example.com/v1",
		wantNoRequest: true,
		want:          `{"apiVersion":"example.com/v1","kind":"CronTab"}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeWebhook{}
			c := newTestConverter(t, f, tt.versions...)
			got, err := c.ConvertToVersion(tt.in, gv(tt.to))
			if err != nil {
				t.Fatal(err)
			}
			if g := asJSON(t, got); g != tt.want {
				t.Errorf("got  %s\nwant %s", g, tt.want)
			}
			if tt.wantNoRequest {
				if f.calls != 0 {
					t.Errorf("webhook called %d times, want none", f.calls)
				}
				return
			}
			if f.calls != 1 {
				t.Fatalf("webhook called %d times, want 1", f.calls)
			}
			if f.request["apiVersion"] != tt.wantReview || f.request["kind"] != "ConversionReview" {
				t.Errorf("review sent as %v %v, want %s ConversionReview", f.request["apiVersion"], f.request["kind"], tt.wantReview)
			}
			req := f.request["request"].(map[string]any)
			if req["desiredAPIVersion"] != tt.to {
				t.Errorf("desiredAPIVersion = %v, want %s", req["desiredAPIVersion"], tt.to)
			}
			if n := len(req["objects"].([]any)); n != tt.wantSent {
				t.Errorf("sent %d objects, want %d", n, tt.wantSent)
			}
			if uid, _ := req["uid"].(string); len(uid) != 36 {
				t.Errorf("request uid = %q, want a UUID", uid)
			}
			if f.cfg.URL == nil || *f.cfg.URL != "https://127.0.0.1:1/crdconvert" {
				t.Errorf("transport got client config %+v", f.cfg)
			}
			if f.deadline <= 0 || f.deadline > WebhookTimeout {
				t.Errorf("transport context deadline in %v, want within %v", f.deadline, WebhookTimeout)
			}
		})
	}
}

func TestWebhookUIDIsFresh(t *testing.T) {
	f := &fakeWebhook{}
	c := newTestConverter(t, f)
	seen := map[string]bool{}
	for range 3 {
		if _, err := c.ConvertToVersion(stored("a"), gv("example.com/v1")); err != nil {
			t.Fatal(err)
		}
		if seen[f.uid()] {
			t.Fatalf("uid %s reused", f.uid())
		}
		seen[f.uid()] = true
	}
}

// TestWebhookRequestBody pins the bytes sent, recorded from the oracle's
// requests to a test webhook (uid aside).
func TestWebhookRequestBody(t *testing.T) {
	const object = `{"apiVersion":"example.com/v1beta1","hostPort":"localhost:1234","kind":"CronTab","metadata":{"annotations":{"note":"stored"},"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"labels":{"app":"cron"},"name":"a","namespace":"default","resourceVersion":"7","uid":"uid-a"}}`
	for _, version := range []string{"v1", "v1beta1"} {
		t.Run(version, func(t *testing.T) {
			f := &fakeWebhook{}
			c := newTestConverter(t, f, version)
			if _, err := c.ConvertToVersion(stored("a"), gv("example.com/v1")); err != nil {
				t.Fatal(err)
			}
			want := `{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/` + version + `","request":{"uid":"` + f.uid() +
				`","desiredAPIVersion":"example.com/v1","objects":[` + object + `]},"response":{"uid":"","convertedObjects":null,"result":{"metadata":{}}}}` + "\n"
			if got := string(f.raw); got != want {
				t.Errorf("sent %s\nwant %s", got, want)
			}
		})
	}
}

const prefix = "conversion webhook for example.com/v1beta1, Kind=CronTab "

func TestWebhookTransportErrors(t *testing.T) {
	refused := errors.New(`Post "https://127.0.0.1:1/crdconvert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused`)
	tests := []struct {
		name     string
		f        *fakeWebhook
		versions []string
		in       runtime.Object
		wantErr  string
		wantIs   error
	}{{
		name:    "connection refused",
		f:       &fakeWebhook{err: refused},
		in:      stored("a"),
		wantErr: prefix + `failed: Post "https://127.0.0.1:1/crdconvert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused`,
		wantIs:  refused,
	}, {
		name:    "connection refused for a list",
		f:       &fakeWebhook{err: refused},
		in:      list("example.com/v1beta1", stored("a")),
		wantErr: `conversion webhook for example.com/v1beta1, Kind=CronTabList failed: Post "https://127.0.0.1:1/crdconvert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused`,
	}, {
		name:    "no transport",
		in:      stored("a"),
		wantErr: prefix + "failed: webhook unreachable: no webhook transport is configured",
		wantIs:  ErrNoWebhookTransport,
	}, {
		name:     "no supported review version",
		f:        &fakeWebhook{},
		versions: []string{"v2"},
		in:       stored("a"),
		wantErr:  "no supported conversion review versions",
	}, {
		name:     "no supported review version, nothing to convert",
		f:        &fakeWebhook{},
		versions: []string{"v2"},
		in:       obj("example.com/v1", "a"),
		wantErr:  "no supported conversion review versions",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestConverter(t, tt.f, tt.versions...)
			_, err := c.ConvertToVersion(tt.in, gv("example.com/v1"))
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error = %v\nwant    %s", err, tt.wantErr)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error does not wrap %v", tt.wantIs)
			}
		})
	}
}

// TestWebhookResponseChecks breaks one thing at a time in an otherwise
// correct answer and expects upstream's message for it.
func TestWebhookResponseChecks(t *testing.T) {
	tests := []struct {
		name     string
		versions []string
		edit     func(review map[string]any)
		body     string
		wantErr  string // %UID% stands for the request uid
	}{{
		// Whitespace is an empty YAML document, so it decodes to nothing.
		name:    "blank body",
		body:    " ",
		wantErr: prefix + `failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind=`,
	}, {
		name:    "zero-length body",
		body:    "",
		wantErr: prefix + "failed: 0-length response with status code: 200 and content type: application/json",
	}, {
		name:    "not JSON",
		body:    "{",
		wantErr: prefix + `failed: couldn't get version/kind; json parse error: unexpected end of JSON input`,
	}, {
		name:    "unknown review version",
		edit:    func(r map[string]any) { r["apiVersion"] = "apiextensions.k8s.io/v2" },
		wantErr: prefix + `failed: no kind "ConversionReview" is registered for version "apiextensions.k8s.io/v2" in scheme "pkg/runtime/scheme.go:111"`,
	}, {
		name:    "unknown kind",
		edit:    func(r map[string]any) { r["kind"] = "ConversionReview2" },
		wantErr: prefix + `failed: no kind "ConversionReview2" is registered for version "apiextensions.k8s.io/v1" in scheme "pkg/runtime/scheme.go:111"`,
	}, {
		name:    "no apiVersion or kind",
		edit:    func(r map[string]any) { delete(r, "apiVersion"); delete(r, "kind") },
		wantErr: prefix + `failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind=`,
	}, {
		name:    "v1beta1 answer to v1 review",
		edit:    func(r map[string]any) { r["apiVersion"] = "apiextensions.k8s.io/v1beta1" },
		wantErr: prefix + `failed: converting (v1beta1.ConversionReview) to (v1.ConversionReview): unknown conversion`,
	}, {
		name:    "no response",
		edit:    func(r map[string]any) { delete(r, "response") },
		wantErr: prefix + "failed: no response provided",
	}, {
		name:    "no uid",
		edit:    func(r map[string]any) { delete(response(r), "uid") },
		wantErr: prefix + `failed: expected response.uid="%UID%", got ""`,
	}, {
		name:    "wrong uid",
		edit:    func(r map[string]any) { response(r)["uid"] = "other" },
		wantErr: prefix + `failed: expected response.uid="%UID%", got "other"`,
	}, {
		name: "failure with message",
		edit: func(r map[string]any) {
			response(r)["result"] = map[string]any{"status": "Failure", "message": "cannot convert"}
		},
		wantErr: prefix + "failed: cannot convert",
	}, {
		name:    "failure without message",
		edit:    func(r map[string]any) { response(r)["result"] = map[string]any{"status": "Failure"} },
		wantErr: prefix + "failed: response.result.status was 'Failure', not 'Success'",
	}, {
		name:    "no status",
		edit:    func(r map[string]any) { delete(response(r), "result") },
		wantErr: prefix + "failed: response.result.status was '', not 'Success'",
	}, {
		name:    "too few objects",
		edit:    func(r map[string]any) { delete(response(r), "convertedObjects") },
		wantErr: prefix + "returned 0 objects, expected 1",
	}, {
		name: "too many objects",
		edit: func(r map[string]any) {
			o := response(r)["convertedObjects"].([]any)
			response(r)["convertedObjects"] = append(o, o[0])
		},
		wantErr: prefix + "returned 2 objects, expected 1",
	}, {
		name:    "object without kind",
		edit:    func(r map[string]any) { delete(converted(r, 0), "kind") },
		wantErr: `Object 'Kind' is missing in '{"apiVersion":"example.com/v1","host":"localhost","metadata":{"annotations":{"note":"stored"},"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"labels":{"app":"cron"},"name":"a","namespace":"default","resourceVersion":"7","uid":"uid-a"},"port":"1234"}'`,
	}, {
		name:    "object not converted",
		edit:    func(r map[string]any) { converted(r, 0)["apiVersion"] = "example.com/v1beta1" },
		wantErr: prefix + "returned invalid object at index 0: invalid groupVersion (expected example.com/v1, received example.com/v1beta1)",
	}, {
		name:    "object of another kind",
		edit:    func(r map[string]any) { converted(r, 0)["kind"] = "Other" },
		wantErr: prefix + "returned invalid object at index 0: invalid kind (expected CronTab, received Other)",
	}, {
		name:    "renamed",
		edit:    func(r map[string]any) { metadata(r, 0)["name"] = "b" },
		wantErr: prefix + "returned invalid object: must have the same name: a != b",
	}, {
		name:    "moved",
		edit:    func(r map[string]any) { metadata(r, 0)["namespace"] = "other" },
		wantErr: prefix + "returned invalid object: must have the same namespace: default != other",
	}, {
		name:    "new uid",
		edit:    func(r map[string]any) { metadata(r, 0)["uid"] = "x" },
		wantErr: prefix + "returned invalid object: must have the same UID: uid-a != x",
	}, {
		name:    "no metadata",
		edit:    func(r map[string]any) { delete(converted(r, 0), "metadata") },
		wantErr: prefix + "returned invalid object: must have the same name: a != ",
	}, {
		name:    "invalid label",
		edit:    func(r map[string]any) { metadata(r, 0)["labels"] = map[string]any{"app": "not valid!"} },
		wantErr: prefix + `returned invalid metadata: metadata.labels: Invalid value: "not valid!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
	}, {
		name:    "invalid annotation key",
		edit:    func(r map[string]any) { metadata(r, 0)["annotations"] = map[string]any{"a/b/c": "x"} },
		wantErr: prefix + `returned invalid metadata: metadata.annotation: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
	}, {
		name:    "label not a string",
		edit:    func(r map[string]any) { metadata(r, 0)["labels"] = map[string]any{"app": 1} },
		wantErr: prefix + "returned invalid metadata: metadata.labels[app] must be a string, but is int64 in converted object",
	}, {
		name:    "labels not a map",
		edit:    func(r map[string]any) { metadata(r, 0)["labels"] = "app" },
		wantErr: prefix + "returned invalid metadata: invalid metadata.labels of type string in converted object",
	}, {
		name:     "v1beta1 answer is not checked for uid or kind",
		versions: []string{"v1beta1"},
		edit: func(r map[string]any) {
			delete(r, "apiVersion")
			delete(r, "kind")
			response(r)["uid"] = "other"
		},
	}, {
		name:     "v1beta1 failure",
		versions: []string{"v1beta1"},
		edit:     func(r map[string]any) { response(r)["result"] = map[string]any{"status": "Failure"} },
		wantErr:  prefix + "failed: response.result.status was 'Failure', not 'Success'",
	}, {
		name:     "v1beta1 no response",
		versions: []string{"v1beta1"},
		edit:     func(r map[string]any) { delete(r, "response") },
		wantErr:  prefix + "failed: no response provided",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeWebhook{edit: tt.edit}
			if tt.edit == nil {
				f.body = []byte(tt.body)
			}
			c := newTestConverter(t, f, tt.versions...)
			_, err := c.ConvertToVersion(stored("a"), gv("example.com/v1"))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			want := strings.ReplaceAll(tt.wantErr, "%UID%", f.uid())
			if err == nil || err.Error() != want {
				t.Fatalf("error = %v\nwant    %s", err, want)
			}
		})
	}
}

// TestWebhookListChecks covers the list wording, where the index counts the
// objects sent, not the list items.
func TestWebhookListChecks(t *testing.T) {
	const listPrefix = "conversion webhook for example.com/v1beta1, Kind=CronTabList "
	tests := []struct {
		name    string
		edit    func(review map[string]any)
		wantErr string
	}{{
		name:    "wrong count",
		edit:    func(r map[string]any) { response(r)["convertedObjects"] = []any{} },
		wantErr: listPrefix + "returned 0 objects, expected 2",
	}, {
		name:    "object without kind",
		edit:    func(r map[string]any) { delete(converted(r, 1), "kind") },
		wantErr: listPrefix + `returned invalid converted object at index 1: Object 'Kind' is missing in '{"apiVersion":"example.com/v1","host":"h3","metadata":{"name":"c","namespace":"default"},"port":"3"}'`,
	}, {
		name:    "not converted",
		edit:    func(r map[string]any) { converted(r, 1)["apiVersion"] = "example.com/v1beta1" },
		wantErr: listPrefix + "returned invalid converted object at index 1: invalid groupVersion (expected example.com/v1, received example.com/v1beta1)",
	}, {
		name:    "other kind",
		edit:    func(r map[string]any) { converted(r, 1)["kind"] = "Other" },
		wantErr: listPrefix + "returned invalid converted object at index 1: invalid kind (expected CronTab, received Other)",
	}, {
		name:    "renamed",
		edit:    func(r map[string]any) { metadata(r, 1)["name"] = "x" },
		wantErr: listPrefix + "returned invalid converted object at index 1: must have the same name: c != x",
	}, {
		name:    "metadata not a map",
		edit:    func(r map[string]any) { converted(r, 1)["metadata"] = "x" },
		wantErr: listPrefix + "returned invalid converted object at index 1: must have the same name: c != ",
	}, {
		name:    "invalid label",
		edit:    func(r map[string]any) { metadata(r, 1)["labels"] = map[string]any{"-": "x"} },
		wantErr: listPrefix + `returned invalid metadata in object at index 1: metadata.labels: Invalid value: "-": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeWebhook{edit: tt.edit}
			c := newTestConverter(t, f)
			in := list("example.com/v1beta1",
				obj("example.com/v1beta1", "a", "hostPort", "h1:1"),
				obj("example.com/v1", "b", "host", "h2", "port", "2"),
				obj("example.com/v1beta1", "c", "hostPort", "h3:3"))
			_, err := c.ConvertToVersion(in, gv("example.com/v1"))
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error = %v\nwant    %s", err, tt.wantErr)
			}
		})
	}
}

// TestWebhookMetadata checks that only labels and annotations survive from
// the webhook's metadata.
func TestWebhookMetadata(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(meta map[string]any)
		wantMeta string
	}{{
		name:     "unchanged",
		edit:     func(map[string]any) {},
		wantMeta: `{"annotations":{"note":"stored"},"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"labels":{"app":"cron"},"name":"a","namespace":"default","resourceVersion":"7","uid":"uid-a"}`,
	}, {
		name: "labels and annotations changed",
		edit: func(m map[string]any) {
			m["labels"] = map[string]any{"app": "cron", "converted": "true"}
			m["annotations"] = map[string]any{"note": "converted"}
		},
		wantMeta: `{"annotations":{"note":"converted"},"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"labels":{"app":"cron","converted":"true"},"name":"a","namespace":"default","resourceVersion":"7","uid":"uid-a"}`,
	}, {
		name: "labels and annotations removed",
		edit: func(m map[string]any) {
			delete(m, "labels")
			m["annotations"] = nil
		},
		wantMeta: `{"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"name":"a","namespace":"default","resourceVersion":"7","uid":"uid-a"}`,
	}, {
		name: "other metadata changes dropped",
		edit: func(m map[string]any) {
			m["resourceVersion"] = "99"
			m["generation"] = 5
			m["finalizers"] = []any{"x"}
			m["ownerReferences"] = []any{map[string]any{"name": "o"}}
			delete(m, "creationTimestamp")
		},
		wantMeta: `{"annotations":{"note":"stored"},"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"labels":{"app":"cron"},"name":"a","namespace":"default","resourceVersion":"7","uid":"uid-a"}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeWebhook{edit: func(r map[string]any) { tt.edit(metadata(r, 0)) }}
			c := newTestConverter(t, f)
			in := stored("a")
			got, err := c.ConvertToVersion(in, gv("example.com/v1"))
			if err != nil {
				t.Fatal(err)
			}
			if g := asJSON(t, got.(*unstructured.Unstructured).Object["metadata"]); g != tt.wantMeta {
				t.Errorf("metadata = %s\nwant       %s", g, tt.wantMeta)
			}
			if g, w := asJSON(t, in), asJSON(t, stored("a")); g != w {
				t.Errorf("input changed to %s", g)
			}
		})
	}
}

func TestRestoreObjectMeta(t *testing.T) {
	tests := []struct {
		name      string
		original  map[string]any
		converted map[string]any
		want      string
		wantErr   string
	}{{
		name:      "no converted metadata",
		original:  map[string]any{"metadata": map[string]any{}},
		converted: map[string]any{"spec": map[string]any{}},
		want:      `{"spec":{}}`,
		wantErr:   "missing metadata in converted object",
	}, {
		name:      "converted metadata not a map",
		original:  map[string]any{"metadata": map[string]any{}},
		converted: map[string]any{"metadata": []any{"foo"}},
		want:      `{"metadata":["foo"]}`,
		wantErr:   "invalid metadata of type []interface {} in converted object",
	}, {
		name:      "no original metadata",
		original:  map[string]any{"spec": map[string]any{}},
		converted: map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{"a": "b"}}},
		want:      `{"metadata":{"labels":{"a":"b"}}}`,
	}, {
		name:      "original metadata not a map",
		original:  map[string]any{"metadata": []any{"foo"}},
		converted: map[string]any{"metadata": map[string]any{}},
		want:      `{"metadata":["foo"]}`,
		wantErr:   "invalid metadata of type []interface {} in input object",
	}, {
		name:      "original labels not a map",
		original:  map[string]any{"metadata": map[string]any{"labels": "x"}},
		converted: map[string]any{"metadata": map[string]any{"labels": map[string]any{}}},
		want:      `{"metadata":{"labels":"x"}}`,
		wantErr:   "invalid metadata.labels of type string in original object",
	}, {
		name:      "added labels where there were nil",
		original:  map[string]any{"metadata": map[string]any{"labels": nil, "annotations": nil}},
		converted: map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "A"}, "annotations": map[string]any{"b": "B"}}},
		want:      `{"metadata":{"annotations":{"b":"B"},"labels":{"a":"A"}}}`,
	}, {
		name:      "annotation not a string",
		original:  map[string]any{"metadata": map[string]any{}},
		converted: map[string]any{"metadata": map[string]any{"annotations": map[string]any{"a": nil}}},
		wantErr:   "metadata.annotations[a] must be a string, but is <nil> in converted object",
	}, {
		name:      "too long label value",
		original:  map[string]any{"metadata": map[string]any{}},
		converted: map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": strings.Repeat("x", 64)}}},
		wantErr:   `metadata.labels: Invalid value: "` + strings.Repeat("x", 64) + `": must be no more than 63 bytes`,
	}, {
		name:      "too large annotations",
		original:  map[string]any{"metadata": map[string]any{}},
		converted: map[string]any{"metadata": map[string]any{"annotations": map[string]any{"a": strings.Repeat("x", 256*1024)}}},
		wantErr:   `metadata.annotation: Too long: may not be more than 262144 bytes`,
	}, {
		// Only what changed is validated: an object stored before a label
		// rule existed must still convert.
		name:      "unchanged invalid label",
		original:  map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "not valid!"}}},
		converted: map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "not valid!"}}},
		want:      `{"metadata":{"labels":{"a":"not valid!"}}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conv := &unstructured.Unstructured{Object: tt.converted}
			err := restoreObjectMeta(&unstructured.Unstructured{Object: tt.original}, conv)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v\nwant    %s", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tt.want != "" {
				if g := asJSON(t, conv.Object); g != tt.want {
					t.Errorf("got  %s\nwant %s", g, tt.want)
				}
			}
		})
	}
}

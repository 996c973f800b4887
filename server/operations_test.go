package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"crdplay/server"
	"crdplay/server/etcdstore"
)

// get answers a GET of url with its status, headers and body.
func get(t *testing.T, url string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

// TestHealth: /healthz, /livez and /readyz answer as kube-apiserver's (k8s.io/apiserver pkg/server/healthz; the
// texts and headers recorded from the oracle): "ok", the checks with ?verbose, ?exclude, one check by its path,
// and /readyz failing, with the reason withheld, once the server is shutting down.
func TestHealth(t *testing.T) {
	h, err := server.NewHandler(server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/healthz", 200, "ok"},
		{"/livez", 200, "ok"},
		{"/readyz", 200, "ok"},
		{"/healthz?verbose", 200, "[+]ping ok\nhealthz check passed\n"},
		{"/livez?verbose", 200, "[+]ping ok\nlivez check passed\n"},
		{"/readyz?verbose", 200, "[+]ping ok\n[+]shutdown ok\nreadyz check passed\n"},
		{"/readyz?verbose&exclude=shutdown&exclude=nope&exclude=alsonope", 200,
			"[+]ping ok\n[+]shutdown excluded: ok\nwarn: some health checks cannot be excluded: no matches for \"alsonope\",\"nope\"\nreadyz check passed\n"},
		{"/readyz/shutdown", 200, "ok"},
		{"/livez/ping", 200, "ok"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			code, header, body := get(t, srv.URL+tc.path)
			if code != tc.code || body != tc.body {
				t.Errorf("%d %q, want %d %q", code, body, tc.code, tc.body)
			}
			if ct, cc := header.Get("Content-Type"), header.Get("Cache-Control"); ct != "text/plain; charset=utf-8" || cc != "no-cache, private" {
				t.Errorf("Content-Type %q, Cache-Control %q", ct, cc)
			}
		})
	}
	t.Run("unknown check", func(t *testing.T) {
		// Not a health check: the API answers it, with its 404 Status.
		if code, _, body := get(t, srv.URL+"/readyz/etcd"); code != 404 {
			t.Errorf("%d %s, want 404", code, body)
		}
	})

	h.BeginShutdown()
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/readyz", 500, "[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n"},
		{"/readyz?verbose", 500, "[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n"},
		{"/readyz/shutdown", 500, "internal server error: process is shutting down\n"},
		{"/livez", 200, "ok"},
		{"/readyz?exclude=shutdown", 200, "ok"},
	} {
		t.Run("shutting down "+tc.path, func(t *testing.T) {
			if code, _, body := get(t, srv.URL+tc.path); code != tc.code || body != tc.body {
				t.Errorf("%d %q, want %d %q", code, body, tc.code, tc.body)
			}
		})
	}
}

// TestHealthEtcd: with etcd storage, the health endpoints check etcd (as kube-apiserver's "etcd" and
// "etcd-readiness"), fail while it is unreachable, and pass once it is there.
func TestHealthEtcd(t *testing.T) {
	needSockets(t)
	addr := closedPort(t)
	var logBuf syncBuffer
	log, err := server.NewLogger(&logBuf, server.LogFormatText)
	if err != nil {
		t.Fatal(err)
	}
	url, _ := serveHandler(t, server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Endpoints: []string{"http://" + addr}},
		Log: log})

	want := "[+]ping ok\n[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n"
	start := time.Now()
	if code, _, body := get(t, url+"/readyz"); code != 500 || body != want {
		t.Errorf("/readyz without etcd: %d %q, want 500 %q", code, body, want)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("/readyz without etcd took %v", d)
	}
	if code, _, body := get(t, url+"/livez"); code != 500 || !strings.Contains(body, "[-]etcd failed: reason withheld\n") {
		t.Errorf("/livez without etcd: %d %q", code, body)
	}
	if code, _, body := get(t, url+"/livez?exclude=etcd"); code != 200 || body != "ok" {
		t.Errorf("/livez?exclude=etcd without etcd: %d %q", code, body)
	}
	if !strings.Contains(logBuf.String(), "readyz check failed") {
		t.Errorf("the failure is not logged:\n%s", logBuf.String())
	}
	// The request's failure is logged with what its answer leaves out, under the request's audit ID.
	if code, _, body := get(t, url+crdsPath, "Audit-ID", "etcd-failure"); code != 503 {
		t.Errorf("GET without etcd: %d %s", code, body)
	}
	if !regexp.MustCompile(`msg="etcd request failed" op=list key=/registry/\S+ endpoints=http://` + regexp.QuoteMeta(addr) + ` .*auditID=etcd-failure`).MatchString(logBuf.String()) {
		t.Errorf("the etcd failure is not logged with its endpoint, key and audit ID:\n%s", logBuf.String())
	}

	_, stop, err := etcdstore.StartEmbeddedOn(t.TempDir(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	waitFor(t, url+"/readyz", 200)
	want = "[+]ping ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]shutdown ok\nreadyz check passed\n"
	if code, _, body := get(t, url+"/readyz?verbose"); code != 200 || body != want {
		t.Errorf("/readyz?verbose with etcd: %d %q, want 200 %q", code, body, want)
	}
	if code, _, body := get(t, url+"/healthz?verbose"); code != 200 || body != "[+]ping ok\n[+]etcd ok\nhealthz check passed\n" {
		t.Errorf("/healthz?verbose with etcd: %d %q", code, body)
	}
}

// TestMetrics: /metrics serves the Prometheus text format with kube-apiserver's request metrics (names,
// labels and buckets as in k8s.io/apiserver pkg/endpoints/metrics) and, with etcd storage, its etcd latency.
func TestMetrics(t *testing.T) {
	needSockets(t)
	url := etcdServer(t, startEtcd(t))
	mustDo(t, "POST", url+crdsPath, widgetCRD, 201)
	waitFor(t, url+widgetsPath, 200)
	mustDo(t, "POST", url+widgetsPath, widget("w1"), 201)
	mustDo(t, "GET", url+widgetsPath+"/w1", "", 200)
	mustDo(t, "POST", url+widgetsPath+"?dryRun=All", widget("w2"), 201)
	do(t, "POST", url+widgetsPath+"?dryRun=chosen-by-client", widget("w3"))
	mustDo(t, "GET", url+widgetsPath+"/nope", "", 404)
	mustDo(t, "GET", url+"/apis/no.such.group/v1/things", "", 404)
	get(t, url+"/readyz")

	code, header, body := get(t, url+"/metrics")
	if code != 200 || !strings.HasPrefix(header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d %s", code, header.Get("Content-Type"))
	}
	for _, want := range []string{
		"# TYPE apiserver_request_total counter",
		"# TYPE apiserver_request_duration_seconds histogram",
		"# TYPE etcd_request_duration_seconds histogram",
		`apiserver_request_total{code="201",component="apiserver",dry_run="",group="apiextensions.k8s.io",resource="customresourcedefinitions",scope="resource",subresource="",verb="CREATE",version="v1"} 1`,
		`apiserver_request_total{code="201",component="apiserver",dry_run="",group="example.com",resource="widgets",scope="resource",subresource="",verb="CREATE",version="v1"} 1`,
		`apiserver_request_total{code="200",component="apiserver",dry_run="",group="example.com",resource="widgets",scope="resource",subresource="",verb="GET",version="v1"} 1`,
		`apiserver_request_total{code="200",component="",dry_run="",group="",resource="",scope="",subresource="/readyz",verb="GET",version=""} 1`,
		`apiserver_request_total{code="201",component="apiserver",dry_run="All",group="example.com",resource="widgets",scope="resource",subresource="",verb="CREATE",version="v1"} 1`,
		`dry_run="invalid",group="example.com",resource="widgets",scope="resource",subresource="",verb="CREATE",version="v1"} 1`,
		// Paths that do not exist are not counted by name.
		`apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="",scope="resource",subresource="",verb="GET",version=""} 1`,
		`apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="",scope="cluster",subresource="",verb="LIST",version=""} `,
		`apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="example.com",resource="widgets",scope="resource",subresource="",verb="GET",version="v1",le="0.005"}`,
		`apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="example.com",resource="widgets",scope="resource",subresource="",verb="GET",version="v1",le="60"}`,
		`etcd_request_duration_seconds_count{group="example.com",operation="create",resource="widgets"} 1`,
		`etcd_request_duration_seconds_bucket{group="apiextensions.k8s.io",operation="get",resource="customresourcedefinitions",le="0.025"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, unwanted := range []string{"no.such.group", `resource="things"`, "nope", "chosen-by-client"} {
		if strings.Contains(body, unwanted) {
			t.Errorf("/metrics names a path that does not exist: %s", unwanted)
		}
	}
}

// TestRequestTimeout: a ?timeout= that does not parse is refused as kube-apiserver refuses it (the Status
// recorded from the oracle), before the engine sees the request.
func TestRequestTimeout(t *testing.T) {
	url, _ := serveHandler(t, server.Options{})
	const want = `{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "invalid timeout specified in the request URL - time: invalid duration \"abc\"",
  "reason": "BadRequest",
  "code": 400
}`
	code, header, body := get(t, url+crdsPath+"?timeout=abc", "User-Agent", "curl/8.0")
	if code != 400 || body != want || header.Get("Content-Type") != "application/json" || header.Get("Cache-Control") != "no-cache, private" {
		t.Errorf("%d %s %q\n%s\nwant 400 application/json\n%s", code, header.Get("Content-Type"), header.Get("Cache-Control"), body, want)
	}
	for _, ok := range []string{"?timeout=5s", "?timeout=0", "?timeout=10m"} {
		if code, _, body := get(t, url+crdsPath+ok); code != 200 {
			t.Errorf("%s: %d %s", ok, code, body)
		}
	}
}

// TestAuditID: every answer carries an Audit-Id (the client's Audit-ID if it sent one), and the request's log
// lines carry it too, in either log format.
func TestAuditID(t *testing.T) {
	for _, format := range []string{server.LogFormatText, server.LogFormatJSON} {
		t.Run(format, func(t *testing.T) {
			var buf syncBuffer
			log, err := server.NewLogger(&buf, format)
			if err != nil {
				t.Fatal(err)
			}
			url, _ := serveHandler(t, server.Options{Log: log, LogRequests: true})

			_, header, _ := get(t, url+"/version")
			id := header.Get("Audit-Id")
			if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(id) {
				t.Errorf("Audit-Id %q, want a UUID", id)
			}
			_, header, _ = get(t, url+"/healthz", "Audit-ID", "client-chosen-id")
			if got := header.Get("Audit-Id"); got != "client-chosen-id" {
				t.Errorf("Audit-Id %q, want the client's", got)
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if len(lines) != 2 {
				t.Fatalf("%d log lines, want 2:\n%s", len(lines), buf.String())
			}
			for i, want := range []string{id, "client-chosen-id"} {
				if format == server.LogFormatJSON {
					var rec map[string]any
					if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil || rec["auditID"] != want || rec["msg"] != "request" {
						t.Errorf("line %d %s (%v), want JSON with auditID %s", i, lines[i], err, want)
					}
				} else if !strings.Contains(lines[i], "auditID="+want) {
					t.Errorf("line %d %s, want auditID=%s", i, lines[i], want)
				}
			}
		})
	}
	if _, err := server.NewLogger(io.Discard, "xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("log format xml: %v, want an error naming it", err)
	}
}

// TestEmbeddedEtcdLogged: the embedded etcd's client URL, chosen at start, is in the log, so that another
// server on the host can share its objects.
func TestEmbeddedEtcdLogged(t *testing.T) {
	needSockets(t)
	var buf syncBuffer
	h, err := server.NewHandler(server.Options{Storage: server.StorageEtcd,
		Etcd: server.EtcdOptions{Embedded: true, DataDir: t.TempDir()}, Log: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	m := regexp.MustCompile(`msg="embedded etcd started" clientURL=(http://127\.0\.0\.1:\d+)`).FindStringSubmatch(buf.String())
	if m == nil {
		t.Fatalf("no client URL in the log:\n%s", buf.String())
	}
	// The URL is one a second server can use.
	second := etcdServer(t, m[1])
	mustDo(t, "GET", second+crdsPath, "", 200)
}

// TestBodyReadTimeout: a client that stops sending its body in the middle loses the request after the
// request timeout, instead of holding it open; a watch is not cut by that deadline.
func TestBodyReadTimeout(t *testing.T) {
	needSockets(t)
	const timeout = 500 * time.Millisecond
	h, err := server.NewHandler(server.Options{RequestTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"apiVersion\":", crdsPath)
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		resp.Body.Close()
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a stalled body held the request for %v (%v)", d, err)
	}

	// A watch (which sends its body at once, here none) outlives the timeout.
	wc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	fmt.Fprintf(wc, "GET %s?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n", crdsPath)
	br := bufio.NewReader(wc)
	wresp, err := http.ReadResponse(br, nil)
	if err != nil || wresp.StatusCode != 200 {
		t.Fatalf("watch: %v %v", wresp, err)
	}
	time.Sleep(3 * timeout)
	wc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := br.ReadByte(); err == nil || !isTimeout(err) {
		t.Errorf("watch after the request timeout: %v, want it still open (a read timeout)", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// syncBuffer is a bytes.Buffer that concurrent requests may log to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

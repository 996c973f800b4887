package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// A healthCheck is one named check of /healthz, /livez or /readyz, as kube-apiserver's healthz.HealthChecker:
// Check returns nil when healthy.
type healthCheck struct {
	name  string
	check func(r *http.Request) error
}

// pingCheck always passes: a server that answers it is alive.
var pingCheck = healthCheck{"ping", func(*http.Request) error { return nil }}

// healthEndpoints serves kube-apiserver's health endpoints with its texts: /healthz, /livez and /readyz answer
// "ok", or with ?verbose one "[+]name ok" line per check and "NAME check passed"; a failing check makes it a
// 500 whose lines say "[-]name failed: reason withheld" (the endpoints are public; the reason goes to the log)
// and end with "NAME check failed". ?exclude=name skips a check. /NAME/CHECK runs one check.
type healthEndpoints struct {
	checks map[string][]healthCheck // by endpoint name: "healthz", "livez", "readyz"
	log    *slog.Logger             // may be nil
}

// handles reports whether p is one of the health endpoints or one of their single checks.
func (e *healthEndpoints) handles(p string) bool {
	endpoint, check, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	checks, ok := e.checks[endpoint]
	return ok && (check == "" || slices.ContainsFunc(checks, func(c healthCheck) bool { return c.name == check }))
}

// ServeHTTP serves the endpoint or the single check of r's path; handles must have accepted it.
func (e *healthEndpoints) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	checks := e.checks[endpoint]
	w.Header().Set("Cache-Control", "no-cache, private")
	if name != "" {
		for _, c := range checks {
			if c.name != name {
				continue
			}
			if err := c.check(r); err != nil {
				http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprint(w, "ok")
			return
		}
		http.NotFound(w, r)
		return
	}

	excluded := map[string]bool{}
	for _, x := range r.URL.Query()["exclude"] {
		excluded[x] = true
	}
	var out, failedDetail bytes.Buffer
	var failed []string
	for _, c := range checks {
		if excluded[c.name] {
			delete(excluded, c.name)
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.name)
			continue
		}
		if err := c.check(r); err != nil {
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.name)
			fmt.Fprintf(&failedDetail, "[-]%s failed: %v\n", c.name, err)
			failed = append(failed, c.name)
		} else {
			fmt.Fprintf(&out, "[+]%s ok\n", c.name)
		}
	}
	if len(excluded) > 0 {
		unknown := make([]string, 0, len(excluded))
		for x := range excluded {
			unknown = append(unknown, fmt.Sprintf("%q", x))
		}
		sort.Strings(unknown)
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(unknown, ","))
	}
	if len(failed) > 0 {
		if e.log != nil {
			e.log.WarnContext(r.Context(), endpoint+" check failed", "checks", strings.Join(failed, ","), "detail", failedDetail.String())
		}
		http.Error(w, fmt.Sprintf("%s%s check failed", out.String(), endpoint), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, verbose := r.URL.Query()["verbose"]; !verbose {
		fmt.Fprint(w, "ok")
		return
	}
	out.WriteTo(w)
	fmt.Fprintf(w, "%s check passed\n", endpoint)
}

// withOperations serves kube-apiserver's operational endpoints in front of h: the health endpoints (counted
// in the request metrics as upstream counts them) and /metrics.
func withOperations(h http.Handler, health *healthEndpoints, m *metrics, protect func(http.Handler) http.Handler) http.Handler {
	healthHandler := m.instrument(health)
	// /metrics is kube-apiserver's non-resource path: behind authentication and authorization as the API is.
	// The health endpoints stay public, for probes that carry no credentials.
	metricsHandler := protect(m.handler())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case health.handles(r.URL.Path):
			healthHandler.ServeHTTP(w, r)
		case r.URL.Path == "/metrics":
			metricsHandler.ServeHTTP(w, r)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

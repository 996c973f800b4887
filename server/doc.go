// Package server hosts the engine as a native HTTP server. It adds only what needs a real process and real
// sockets: the choice of storage (memory, or etcd through etcdstore), an HTTPS transport for conversion webhooks (HTTPSWebhook), an optional access
// log, and serving until a context ends with a graceful shutdown. It also adds what kube-apiserver's filters
// and operational endpoints give operators, with upstream's names and texts: /healthz, /livez and /readyz
// (health.go), /metrics (metrics.go), the per-request deadline and ?timeout= (deadline.go), the limits of
// requests in flight (inflight.go), and the Audit-Id
// of each request in its response and log lines (requestlog.go), authentication and authorization composed of
// upstream's authenticators and filters (auth.go, abac.go), TLS serving with certificates reloaded from their
// files (tls.go), and a restriction of where conversion webhooks may be called (webhook.go). Everything a request means is decided by the
// engine, which stays free of listeners and storage choices so that the same code can run in a browser tab
// (see docs/architecture.md). cmd/crdplay-server is the command.
package server

// Command crdplay-server serves the crdplay engine (the Kubernetes API for CustomResourceDefinitions and the
// resources they define) over HTTP.
//
//	crdplay-server [--addr 127.0.0.1:8080] [--storage memory] [--site build/web] [--log-requests] [--log-format text|json]
//	crdplay-server --emulated-version 1.35 ...
//	crdplay-server --tls-cert-file F --tls-private-key-file F [--token-auth-file F] [--client-ca-file F] [--anonymous-auth]
//	               [--authorization-mode AlwaysAllow|AuthenticatedWrite|ABAC [--authorization-policy-file F]] [--webhook-destinations off|loopback|CIDR,...|any] ...
//	crdplay-server --storage etcd --etcd-endpoints URL,... [--etcd-cafile F] [--etcd-certfile F --etcd-keyfile F] ...
//	crdplay-server --storage etcd --etcd-embedded --data-dir DIR [--etcd-unsafe-no-fsync] ...
//
// With --storage etcd, objects are kept in an etcd cluster, or in an etcd the server runs inside itself on a
// loopback port (--etcd-embedded), whose data survives restarts in --data-dir. --etcd-unsafe-no-fsync is for
// benchmarks alone: the embedded etcd then acknowledges writes before they are on disk, as the oracle's does,
// and a crash loses them. --etcd-compaction-interval (default 5m, 0 never) compacts etcd's history as
// kube-apiserver does, one replica each interval. While etcd cannot be reached,
// requests answer 503 Service Unavailable; the server keeps running and recovers when etcd is back.
//
// With a site (tools/webbuild's output; by default build/web when it exists, as `make run` builds it), the
// server also hosts the playground: http://ADDR/ is the page, /embed/ its embeddable form, and the API keeps
// its paths (/api, /apis, /version, /openapi/...). --site "" serves the API alone.
//
// The server also keeps short links for the page (POST /crdplay/v1/links, GET /crdplay/v1/links/ID) in its
// storage, so that with etcd they survive restarts; --max-links bounds how many (0 turns them off).
//
// It serves kube-apiserver's operational endpoints beside the API: /healthz, /livez and /readyz (with etcd
// storage, they fail while etcd is unreachable; ?verbose lists the checks), and /metrics in the Prometheus
// format. Each request but a watch has --request-timeout, which ?timeout= may shorten; --max-requests-inflight
// and --max-mutating-requests-inflight bound the requests running at once (429 above). Logs go to stderr
// (--log-format json for one JSON object a line); the embedded etcd's client URL is logged at start.
//
// --emulated-version answers as kube-apiserver's flag of that name does: as the Kubernetes minor it names (1.34
// to 1.37; by default the newest), in /version, the CEL environment of new rules and the versioned feature
// gates. Upstream keeps that state process-wide, so a server serves one version; run one per version.
//
// On a network it is run as kube-apiserver is, with its flags: --tls-cert-file and --tls-private-key-file serve
// HTTPS (the files are watched and a renewed certificate is served without a restart); --token-auth-file and
// --client-ca-file authenticate, after which requests without credentials get 401 unless --anonymous-auth=true;
// --authorization-mode is AlwaysAllow, AuthenticatedWrite (authenticated users write, anonymous ones read) or
// ABAC with --authorization-policy-file. The page's files, its short links (unless --authenticate-links) and the
// health endpoints stay public. --webhook-destinations restricts where conversion webhooks may be called (off,
// loopback, CIDRs, any), checked on each address dialled.
//
// It stops gracefully on SIGINT or SIGTERM (/readyz fails from then on); a second signal stops it at once.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"crdplay/engine"
	"crdplay/server"
)

// shutdownGrace is how long requests in flight may take to finish after a stop signal.
const shutdownGrace = 5 * time.Second

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen on `host:port`")
	storage := flag.String("storage", server.StorageMemory, "where objects are kept: memory (lost on exit) or etcd")
	var etcd server.EtcdOptions
	endpoints := flag.String("etcd-endpoints", "", "with --storage etcd: the cluster's client `URLs`, comma-separated")
	flag.StringVar(&etcd.CAFile, "etcd-cafile", "", "CA certificate `file` that verifies the etcd servers (default: the system's roots)")
	flag.StringVar(&etcd.CertFile, "etcd-certfile", "", "client certificate `file` for etcd (with --etcd-keyfile)")
	flag.StringVar(&etcd.KeyFile, "etcd-keyfile", "", "client key `file` for etcd (with --etcd-certfile)")
	flag.BoolVar(&etcd.Embedded, "etcd-embedded", false, "with --storage etcd: run etcd inside the server, on a loopback port (needs --data-dir)")
	flag.BoolVar(&etcd.UnsafeNoFsync, "etcd-unsafe-no-fsync", false, "with --etcd-embedded: never fsync etcd's log, as etcd's --unsafe-no-fsync; a crash LOSES ACKNOWLEDGED WRITES (for benchmarks only)")
	compaction := flag.Duration("etcd-compaction-interval", server.DefaultEtcdCompactionInterval, "with --storage etcd: how often etcd's history is compacted, as kube-apiserver's flag (one replica compacts each interval); 0 never compacts")
	flag.StringVar(&etcd.DataDir, "data-dir", "", "`directory` of the embedded etcd's data, created if needed")
	maxLinks := flag.Int("max-links", server.DefaultMaxLinks, "how many short links (POST /crdplay/v1/links) the server keeps in its storage; 0 turns them off")
	logRequests := flag.Bool("log-requests", false, "log one line per request to stderr")
	logFormat := flag.String("log-format", server.LogFormatText, "log `format`: text or json")
	requestTimeout := flag.Duration("request-timeout", server.DefaultRequestTimeout, "longest `duration` of a request but a watch; ?timeout= may shorten it")
	maxInflight := flag.Int("max-requests-inflight", server.DefaultMaxRequestsInFlight, "the most reads (get, list) running at once, as kube-apiserver's flag: more are answered 429 with Retry-After; watches and health checks are not counted; 0 for no limit")
	maxMutatingInflight := flag.Int("max-mutating-requests-inflight", server.DefaultMaxMutatingRequestsInFlight, "the most writes running at once, as kube-apiserver's flag: more are answered 429 with Retry-After; 0 for no limit")
	emulated := flag.String("emulated-version", "", "the Kubernetes `minor` to answer as, as kube-apiserver's --emulated-version: one of "+strings.Join(engine.EmulatedVersions(), ", ")+" (default: the newest)")
	var auth server.AuthOptions
	flag.StringVar(&auth.TokenAuthFile, "token-auth-file", "", "bearer tokens `file` (CSV: token,user,uid,\"group1,group2\"), as kube-apiserver's flag; read at start")
	flag.StringVar(&auth.ClientCAFile, "client-ca-file", "", "CA `file` whose client certificates authenticate (CN user, O groups); needs --tls-cert-file; reloaded when it changes")
	anonymous := flag.Bool("anonymous-auth", false, "let requests without credentials in as system:anonymous (default: only when no authenticator is configured)")
	flag.StringVar(&auth.AuthorizationMode, "authorization-mode", "", "AlwaysAllow, AuthenticatedWrite (authenticated users do everything, anonymous ones only read) or ABAC (default: AlwaysAllow without authenticators, AuthenticatedWrite with one)")
	flag.StringVar(&auth.AuthorizationPolicyFile, "authorization-policy-file", "", "ABAC policy `file` (kube-apiserver's format, one JSON policy a line) for --authorization-mode=ABAC")
	flag.BoolVar(&auth.AuthenticateLinks, "authenticate-links", false, "put short links (POST "+server.LinksPath+") behind authentication and authorization; by default the page's visitors create them anonymously")
	tlsCert := flag.String("tls-cert-file", "", "serve HTTPS with this certificate `file` (PEM; reloaded when it changes), with --tls-private-key-file")
	tlsKey := flag.String("tls-private-key-file", "", "private key `file` of --tls-cert-file (reloaded when it changes)")
	webhooks := flag.String("webhook-destinations", "any", "where conversion webhooks may be called: any, off, or a comma-separated `list` of CIDRs and loopback; checked on the address dialled")
	site := flag.String("site", server.DefaultSiteDir, "`directory` of the playground's static build to serve at / (\"\" for the API alone)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: crdplay-server [flags]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fatalUsage("unexpected arguments: %v", flag.Args())
	}

	// Checked before anything starts: upstream applies the flag to the whole process.
	if _, err := engine.Emulate(*emulated); err != nil {
		fatalUsage("--emulated-version: %v", err)
	}

	if *compaction < 0 {
		fatalUsage("--etcd-compaction-interval: %v is negative", *compaction)
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *storage == server.StorageEtcd || set["etcd-compaction-interval"] {
		etcd.CompactionInterval = *compaction
	}
	if *endpoints != "" {
		etcd.Endpoints = strings.Split(*endpoints, ",")
	}

	log, err := server.NewLogger(os.Stderr, *logFormat)
	if err != nil {
		fatalUsage("--log-format: %v", err)
	}
	if set["anonymous-auth"] {
		auth.Anonymous = anonymous
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		fatalUsage("--tls-cert-file and --tls-private-key-file go together")
	}
	if auth.ClientCAFile != "" && *tlsCert == "" {
		fatalUsage("--client-ca-file needs TLS serving (--tls-cert-file): client certificates come with the TLS handshake")
	}
	destinations, err := server.ParseWebhookDestinations(*webhooks)
	if err != nil {
		fatalUsage("--webhook-destinations: %v", err)
	}
	opts := server.Options{Storage: *storage, Etcd: etcd, Site: *site, Log: log, LogRequests: *logRequests,
		RequestTimeout: *requestTimeout, EmulatedVersion: *emulated, Links: server.LinkOptions{Off: *maxLinks <= 0, MaxCount: *maxLinks},
		Auth: auth, WebhookDestinations: destinations,
		MaxRequestsInFlight: *maxInflight, MaxMutatingRequestsInFlight: *maxMutatingInflight}
	siteSet := set["site"]
	if !siteSet {
		// The default is a convenience for a checkout: without a build there, serve the API alone.
		if _, err := os.Stat(filepath.Join(*site, "index.html")); err != nil {
			log.Info("no playground build; serving the API only (build it with go run ./tools/webbuild)", "site", *site)
			opts.Site = ""
		}
	}
	// Listening first, so that an address in use is reported before an embedded etcd starts.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Error("cannot listen", "err", err)
		os.Exit(1)
	}
	h, err := server.NewHandler(opts)
	if err != nil {
		fatalUsage("%v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	scheme := "http"
	serve := server.Serve
	if *tlsCert != "" {
		// The certificate files are watched for as long as the process runs.
		tlsConfig, err := h.TLSConfig(context.WithoutCancel(ctx), *tlsCert, *tlsKey)
		if err != nil {
			h.Close()
			fatalUsage("--tls-cert-file: %v", err)
		}
		scheme = "https"
		serve = func(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration) error {
			return server.ServeTLS(ctx, ln, h, grace, tlsConfig)
		}
	}
	signalled := make(chan struct{})
	go func() {
		<-ctx.Done()
		stop() // restore default handling: a second signal kills the process
		h.BeginShutdown()
		log.Info("shutting down; interrupt again to stop at once")
		close(signalled)
	}()
	log.Info("serving", "url", scheme+"://"+ln.Addr().String(), "storage", *storage, "site", opts.Site, "kubernetes", engine.KubernetesVersion, "emulated", emulatedMinor(*emulated))
	if err := serve(ctx, ln, h, shutdownGrace); err != nil {
		log.Error("serve", "err", err)
		h.Close()
		os.Exit(1)
	}
	<-signalled // Serve returns nil only after ctx is done; keep the log lines in order
	// An embedded etcd is stopped cleanly here; were the process killed instead, etcd's write-ahead log would
	// still hold every acknowledged write.
	if err := h.Close(); err != nil {
		log.Error("closing storage", "err", err)
	}
	log.Info("stopped")
}

// fatalUsage reports a command-line mistake the way package flag does: message, usage, exit status 2.
func fatalUsage(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "crdplay-server: "+format+"\n", args...)
	flag.Usage()
	os.Exit(2)
}

// emulatedMinor is the minor the server answers as: the flag's, or the newest.
func emulatedMinor(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	vs := engine.EmulatedVersions()
	return vs[len(vs)-1]
}

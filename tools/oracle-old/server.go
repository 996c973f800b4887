package main

// Starting the real apiextensions-apiserver (k8s.io/apiextensions-apiserver)
// backed by an in-process embedded etcd, both bound to 127.0.0.1 only.
//
// The configuration mirrors what upstream's own integration test server
// (k8s.io/apiextensions-apiserver/pkg/cmd/server/testing) does, with these
// differences:
//   - no delegated authn/authz (those need a kube-apiserver): every request
//     is authenticated as system:anonymous and authorized by AlwaysAllow;
//   - no admission plugins (they need a kube-apiserver too), which matches the
//     integration tests' --disable-admission-plugins list;
//   - no core API client: the Service lister that conversion webhooks would
//     use is fed by a fake clientset, so nothing tries to reach a kube-apiserver;
//   - the full handler chain is additionally served on a plain-HTTP loopback
//     listener, so curl/kubectl work without TLS.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/embed"

	extensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/version"
	netutils "k8s.io/utils/net"
)

type serverOptions struct {
	Port       int      // plain HTTP port on 127.0.0.1 (0 = pick a free one)
	SecurePort int      // HTTPS port on 127.0.0.1 (0 = pick a free one)
	EtcdPort   int      // etcd client port on 127.0.0.1 (0 = pick a free one)
	DataDir    string   // etcd data + certs; "" = fresh temp dir, removed on stop
	EtcdPrefix string   // etcd key prefix for the apiserver
	ExtraFlags []string // upstream apiextensions-apiserver flags, e.g. --feature-gates=...
	Shim       bool     // serve /apis and /api for kubectl (not upstream behaviour)
	Verbose    bool
}

type runningServer struct {
	URL       string // plain HTTP base URL
	SecureURL string // HTTPS base URL (self-signed cert)
	EtcdURL   string

	stop func()
}

func (r *runningServer) Stop() { r.stop() }

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startEtcd(dir string, clientPort int, verbose bool) (*embed.Etcd, string, error) {
	var err error
	if clientPort == 0 {
		if clientPort, err = freeLoopbackPort(); err != nil {
			return nil, "", err
		}
	}
	peerPort, err := freeLoopbackPort()
	if err != nil {
		return nil, "", err
	}
	cu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	pu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}

	cfg := embed.NewConfig()
	cfg.Name = "oracle"
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{cu}
	cfg.AdvertiseClientUrls = []url.URL{cu}
	cfg.ListenPeerUrls = []url.URL{pu}
	cfg.AdvertisePeerUrls = []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true // throw-away data; much faster on slow disks
	cfg.LogLevel = "fatal"   // shutdown logs spurious "server closed" errors
	if verbose {
		cfg.LogLevel = "info"
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		e.Close()
		return nil, "", errors.New("embedded etcd did not become ready in 60s")
	}
	return e, cu.String(), nil
}

func startServer(o serverOptions) (*runningServer, error) {
	dataDir := o.DataDir
	removeDir := false
	if dataDir == "" {
		d, err := os.MkdirTemp("", "oracle-data-")
		if err != nil {
			return nil, err
		}
		dataDir, removeDir = d, true
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	cleanupDir := func() {
		if removeDir {
			os.RemoveAll(dataDir)
		}
	}

	etcd, etcdURL, err := startEtcd(dataDir+"/etcd", o.EtcdPort, o.Verbose)
	if err != nil {
		cleanupDir()
		return nil, fmt.Errorf("starting etcd: %w", err)
	}
	stopEtcd := func() {
		etcd.Server.Stop()
		etcd.Close()
	}

	srv, err := startAPIServer(o, dataDir, etcdURL)
	if err != nil {
		stopEtcd()
		cleanupDir()
		return nil, err
	}
	srv.EtcdURL = etcdURL
	apiStop := srv.stop
	srv.stop = func() {
		apiStop()
		stopEtcd()
		cleanupDir()
	}
	return srv, nil
}

func startAPIServer(o serverOptions, dataDir, etcdURL string) (*runningServer, error) {
	opts := options.NewCustomResourceDefinitionsServerOptions(os.Stdout, os.Stderr)
	// Accept the upstream binary's own flags (e.g. --feature-gates,
	// --emulated-version) exactly as `apiextensions-apiserver` would.
	fs := pflag.NewFlagSet("apiextensions-apiserver", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(o.ExtraFlags); err != nil {
		return nil, fmt.Errorf("upstream flags: %w", err)
	}
	if err := setComponentGlobals(opts); err != nil {
		return nil, err
	}

	ro := opts.RecommendedOptions
	// etcd
	ro.Etcd.StorageConfig.Transport.ServerList = []string{etcdURL}
	if o.EtcdPrefix != "" {
		ro.Etcd.StorageConfig.Prefix = o.EtcdPrefix
	}
	// secure serving on loopback (needed for the loopback client the server
	// uses to talk to itself); self-signed cert generated into dataDir.
	securePort := o.SecurePort
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", securePort))
	if err != nil {
		return nil, fmt.Errorf("secure listener: %w", err)
	}
	securePort = ln.Addr().(*net.TCPAddr).Port
	ro.SecureServing.Listener = ln
	ro.SecureServing.BindPort = securePort
	ro.SecureServing.BindAddress = netutils.ParseIPSloppy("127.0.0.1")
	ro.SecureServing.ExternalAddress = netutils.ParseIPSloppy("127.0.0.1")
	ro.SecureServing.ServerCert.CertDirectory = dataDir + "/certs"
	// no kube-apiserver to delegate to
	ro.Authentication = nil
	ro.Authorization = nil // => AlwaysAllow
	ro.CoreAPI = nil
	ro.Admission = nil
	ro.Features.EnablePriorityAndFairness = false
	opts.APIEnablement.RuntimeConfig.Set("api/all=true")

	if err := opts.Complete(); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}

	if err := ro.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("self-signed certificates: %w", err)
	}
	serverConfig := genericapiserver.NewRecommendedConfig(extensionsapiserver.Codecs)
	if err := opts.ServerRunOptions.ApplyTo(&serverConfig.Config); err != nil {
		return nil, err
	}
	if err := applyRecommended(ro, serverConfig); err != nil {
		return nil, err
	}
	if err := opts.APIEnablement.ApplyTo(&serverConfig.Config, extensionsapiserver.DefaultAPIResourceConfigSource(), extensionsapiserver.Scheme); err != nil {
		return nil, err
	}
	// The server's own controllers (naming, establishing, finalizer, ...)
	// write CRD status through the loopback client; in a real cluster their
	// managedFields manager is "kube-apiserver", derived from this user agent.
	serverConfig.LoopbackClientConfig.UserAgent = "kube-apiserver/" + serverVersion() + " (linux/amd64) kubernetes/oracle"
	// Everyone is system:anonymous; the loopback token (system:masters) is
	// added on top of this by Config.Complete().
	serverConfig.Authentication.Authenticator = anonymousAuthenticator()
	// A fake core client: the only consumer is the Service lister used to
	// resolve conversion webhook services.
	serverConfig.SharedInformerFactory = informers.NewSharedInformerFactory(fakeClientset(), 0)

	getDefs := openapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(getDefs, openapinamer.NewDefinitionNamer(extensionsapiserver.Scheme, scheme.Scheme))
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(getDefs, openapinamer.NewDefinitionNamer(extensionsapiserver.Scheme, scheme.Scheme))

	config := &extensionsapiserver.Config{
		GenericConfig: serverConfig,
		ExtraConfig: extensionsapiserver.ExtraConfig{
			CRDRESTOptionsGetter: options.NewCRDRESTOptionsGetter(*ro.Etcd, serverConfig.ResourceTransformers, serverConfig.StorageObjectCountTracker),
			ServiceResolver:      noServices{},
			AuthResolverWrapper:  webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, serverConfig.LoopbackClientConfig, noopTracerProvider()),
		},
	}

	server, err := config.Complete().New(genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("creating apiextensions-apiserver: %w", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	run := prepareRun(server.GenericAPIServer)
	runErr := make(chan error, 1)
	go func() {
		runErr <- run(ctx)
	}()

	// plain HTTP listener with the same handler chain
	plainLn, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", o.Port))
	if err != nil {
		cancel()
		<-runErr
		return nil, fmt.Errorf("plain listener: %w", err)
	}
	var handler http.Handler = server.GenericAPIServer.Handler
	if o.Shim {
		handler = discoveryShim{next: handler}
	}
	httpSrv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 30 * time.Second,
	}
	go httpSrv.Serve(plainLn)

	rs := &runningServer{
		URL:       "http://" + plainLn.Addr().String(),
		SecureURL: fmt.Sprintf("https://127.0.0.1:%d", securePort),
	}
	stopped := false
	rs.stop = func() {
		if stopped {
			return
		}
		stopped = true
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		httpSrv.Shutdown(sctx)
		scancel()
		cancel()
		select {
		case err := <-runErr:
			if err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(os.Stderr, "apiserver stopped with: %v\n", err)
			}
		case <-time.After(70 * time.Second):
			fmt.Fprintln(os.Stderr, "apiserver did not stop within 70s")
		}
	}

	// wait for readiness
	deadline := time.Now().Add(90 * time.Second)
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		select {
		case err := <-runErr:
			httpSrv.Close()
			return nil, fmt.Errorf("apiserver exited early: %v", err)
		default:
		}
		resp, err := client.Get(rs.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			rs.stop()
			return nil, errors.New("apiserver not ready after 90s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return rs, nil
}

type noServices struct{}

func (noServices) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return nil, fmt.Errorf("service %s/%s:%d cannot be resolved: the standalone oracle has no core API", namespace, name, port)
}

func serverVersion() string {
	v := version.Get().GitVersion
	if v == "" || strings.HasPrefix(v, "v0.0.0") {
		return kubeVersion
	}
	return v
}

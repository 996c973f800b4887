//go:build !k8s130

package main

// The 1.32 side of what the apiextensions-apiserver API changed between 1.30
// and 1.32 (server_130.go is the other): built by default, against go.mod.

import (
	"context"

	oteltrace "go.opentelemetry.io/otel/trace"
	noopoteltrace "go.opentelemetry.io/otel/trace/noop"

	"k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

const (
	// kubeVersion is what /version and the loopback user agent report when
	// build.sh did not stamp a version in.
	kubeVersion = "v1.32.13"
	// moduleVersion is the k8s.io module version built against, for the
	// runner's User-Agent.
	moduleVersion = "v0.32.13"
)

// setComponentGlobals applies --emulated-version and --feature-gates to the
// component-globals registry, as the upstream command does after parsing.
func setComponentGlobals(opts *options.CustomResourceDefinitionsServerOptions) error {
	return opts.ServerRunOptions.ComponentGlobalsRegistry.Set()
}

// applyRecommended is RecommendedOptions.ApplyTo: with CoreAPI nil, 1.32 builds
// no kube client.
func applyRecommended(o *genericoptions.RecommendedOptions, config *genericapiserver.RecommendedConfig) error {
	return o.ApplyTo(config)
}

func anonymousAuthenticator() authenticator.Request {
	return anonymous.NewAuthenticator(nil)
}

func fakeClientset() kubernetes.Interface {
	return fake.NewClientset()
}

func noopTracerProvider() oteltrace.TracerProvider {
	return noopoteltrace.NewTracerProvider()
}

// prepareRun prepares s and returns its run function, which serves until ctx
// is done.
func prepareRun(s *genericapiserver.GenericAPIServer) func(context.Context) error {
	return s.PrepareRun().RunWithContext
}

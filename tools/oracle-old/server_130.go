//go:build k8s130

package main

// The 1.30 side of what the apiextensions-apiserver API changed between 1.30
// and 1.32 (server_132.go is the other): built with -tags k8s130 against
// go.1.30.mod (build.sh 1.30).

import (
	"context"

	oteltrace "go.opentelemetry.io/otel/trace"

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
	kubeVersion = "v1.30.14"
	// moduleVersion is the k8s.io module version built against, for the
	// runner's User-Agent.
	moduleVersion = "v0.30.14"
)

// setComponentGlobals does nothing: 1.30 has no component-globals registry
// (and so no --emulated-version); the parsed flags are all there is to apply.
func setComponentGlobals(*options.CustomResourceDefinitionsServerOptions) error {
	return nil
}

// applyRecommended is 1.30's RecommendedOptions.ApplyTo without its kube
// client: 1.30 builds one from ClientConfig unconditionally, and with no
// CoreAPI that config is nil and NewForConfig panics (later versions skip the
// client when CoreAPI is nil). The client only feeds priority & fairness and
// admission, both off here, so the remaining steps are applied as upstream does.
func applyRecommended(o *genericoptions.RecommendedOptions, config *genericapiserver.RecommendedConfig) error {
	if err := o.Etcd.ApplyTo(&config.Config); err != nil {
		return err
	}
	if err := o.EgressSelector.ApplyTo(&config.Config); err != nil {
		return err
	}
	if err := o.Traces.ApplyTo(config.Config.EgressSelector, &config.Config); err != nil {
		return err
	}
	if err := o.SecureServing.ApplyTo(&config.Config.SecureServing, &config.Config.LoopbackClientConfig); err != nil {
		return err
	}
	if err := o.Authentication.ApplyTo(&config.Config.Authentication, config.SecureServing, config.OpenAPIConfig); err != nil {
		return err
	}
	if err := o.Authorization.ApplyTo(&config.Config.Authorization); err != nil {
		return err
	}
	if err := o.Audit.ApplyTo(&config.Config); err != nil {
		return err
	}
	return o.Features.ApplyTo(&config.Config, nil, config.SharedInformerFactory)
}

// anonymousAuthenticator: 1.30's NewAuthenticator takes no conditions.
func anonymousAuthenticator() authenticator.Request {
	return anonymous.NewAuthenticator()
}

// fakeClientset: 1.30 has no fake.NewClientset.
func fakeClientset() kubernetes.Interface {
	return fake.NewSimpleClientset()
}

// noopTracerProvider: otel v1.19 has no trace/noop package.
func noopTracerProvider() oteltrace.TracerProvider {
	return oteltrace.NewNoopTracerProvider()
}

// prepareRun prepares s and returns its run function, which serves until ctx
// is done: 1.30's Run takes a stop channel, not a context.
func prepareRun(s *genericapiserver.GenericAPIServer) func(context.Context) error {
	p := s.PrepareRun()
	return func(ctx context.Context) error { return p.Run(ctx.Done()) }
}

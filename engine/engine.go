// Package engine is crdplay's front door: the Kubernetes REST API for CustomResourceDefinitions and the custom
// resources they define, answering as kube-apiserver v1.37 does
// (or, with Options.EmulatedVersion, as it does emulating an older minor), over a pluggable storage.
//
// The engine is pure Go. It builds natively and for GOOS=js GOARCH=wasm, opens no listener or connection, and
// reaches the outside world only through the interfaces in Options.
package engine

import (
	"context"
	"net/http"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiserver/pkg/admission"

	"crdplay/engine/internal/apiserver"
	"crdplay/engine/storage"
)

// Storage is where the engine keeps objects; see storage.Interface.
type Storage = storage.Interface

// NewMemoryStorage returns an empty in-memory Storage.
func NewMemoryStorage() *storage.Memory { return storage.NewMemory() }

// Options configure an engine.
type Options struct {
	// Storage holds every object. Defaults to a new in-memory store.
	Storage Storage
	// Webhook carries ConversionReview requests to conversion webhooks. Nil means every webhook is
	// unreachable, which is what a browser tab can offer unless the page supplies a converter.
	Webhook WebhookCaller
	// Now is the clock for creationTimestamp and condition times. Defaults to time.Now.
	Now func() time.Time
	// MaxRequestBytes caps request bodies (413 above it). Defaults to 3 MiB, kube-apiserver's limit.
	MaxRequestBytes int64
	// EmulatedVersion is the Kubernetes minor to answer as ("1.34" to "1.37", see EmulatedVersions), as
	// kube-apiserver's --emulated-version does: /version's emulation and minimum compatibility versions, the CEL
	// environment new expressions compile with, and every versioned feature gate. "" is the newest. Upstream
	// keeps this state process-wide, so the first NewHandler applies it to the process and a later one asking
	// for a different version fails: one process serves one emulated version.
	EmulatedVersion string
	// Admission is the admission chain that writes of custom resources and CRDs go through, run where
	// kube-apiserver runs its own (mutating admission on the request's object, validating admission after the
	// strategy). Nil means none, as the standalone apiextensions-apiserver has none. crdplay/policies
	// builds one from admission policies.
	Admission admission.Interface
}

// WebhookCaller delivers one ConversionReview to a conversion webhook. The engine builds the request and checks
// the response with upstream's rules; the caller only moves bytes, so that the engine itself never opens a
// connection (in the browser the page converts, in the server an HTTPS client does).
type WebhookCaller interface {
	// Call sends review (a JSON ConversionReview) to the webhook described by cfg and returns the response body.
	Call(ctx context.Context, cfg apiextensionsv1.WebhookClientConfig, review []byte) ([]byte, error)
}

// NewHandler returns the Kubernetes REST API for CustomResourceDefinitions and the resources they define,
// served from opts.Storage.
func NewHandler(opts Options) (http.Handler, error) {
	if _, err := Emulate(opts.EmulatedVersion); err != nil {
		return nil, err
	}
	if opts.Storage == nil {
		opts.Storage = storage.NewMemory()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 3 << 20
	}
	var call apiserver.WebhookFunc
	if opts.Webhook != nil {
		call = opts.Webhook.Call
	}
	return apiserver.New(apiserver.Config{
		Storage:         opts.Storage,
		Webhook:         call,
		Now:             opts.Now,
		MaxRequestBytes: opts.MaxRequestBytes,
		Admission:       opts.Admission,
	})
}

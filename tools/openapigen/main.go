// Command openapigen writes the OpenAPI documents a standalone apiextensions-apiserver v0.37 publishes for its own
// API, before any CRD exists: /openapi/v3/apis/apiextensions.k8s.io, /openapi/v3/apis/apiextensions.k8s.io/v1,
// /openapi/v3/version and /openapi/v2. The engine serves them next to the documents it builds for CRDs, so that
// kubectl finds what it looks for there (explain crd, and the fieldValidation parameter whose presence makes it
// validate on the server instead of downloading the protobuf OpenAPI v2).
//
// The documents are not written by hand or copied from a server: openapigen builds upstream's server the way
// apiextensions-apiserver's own command does (options, generic API server, the CRD REST storage, the OpenAPI
// configuration of pkg/cmd/server/options) and asks its handler for them. Only the storage is a stand-in that is
// never called, so no etcd is needed. It is a module of its own because it links the whole API server.
//
//	go run -C tools/openapigen . -o ../../engine/internal/openapi/static
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	extensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// documents are the paths fetched and the files they are written to.
var documents = []struct{ path, file string }{
	{"/openapi/v3/apis/apiextensions.k8s.io", "v3-apis-apiextensions.k8s.io.json"},
	{"/openapi/v3/apis/apiextensions.k8s.io/v1", "v3-apis-apiextensions.k8s.io-v1.json"},
	{"/openapi/v3/version", "v3-version.json"},
	{"/openapi/v2", "v2.json"},
}

func main() {
	out := flag.String("o", ".", "`directory` to write the documents to")
	flag.Parse()
	h, err := newServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
	for _, d := range documents {
		req := httptest.NewRequest("GET", d.path, nil)
		req.Header.Set("Accept", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Result().Body)
		if rec.Code != http.StatusOK {
			fmt.Fprintf(os.Stderr, "openapigen: GET %s: %d %s\n", d.path, rec.Code, body)
			os.Exit(1)
		}
		if err := os.WriteFile(filepath.Join(*out, d.file), body, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "openapigen:", err)
			os.Exit(1)
		}
	}
}

// newServer configures apiextensions-apiserver as its command does, with nothing to authenticate against, no
// admission and no storage behind the REST endpoints, and returns its prepared handler.
func newServer() (http.Handler, error) {
	opts := options.NewCustomResourceDefinitionsServerOptions(io.Discard, io.Discard)
	if err := opts.ServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, err
	}
	ro := opts.RecommendedOptions
	ro.Etcd = nil
	ro.SecureServing = nil
	ro.Authentication = nil
	ro.Authorization = nil
	ro.CoreAPI = nil
	ro.Admission = nil
	ro.Features.EnablePriorityAndFairness = false
	if err := opts.APIEnablement.RuntimeConfig.Set("api/all=true"); err != nil {
		return nil, err
	}
	if err := opts.Complete(); err != nil {
		return nil, err
	}

	serverConfig := genericapiserver.NewRecommendedConfig(extensionsapiserver.Codecs)
	if err := opts.ServerRunOptions.ApplyTo(&serverConfig.Config); err != nil {
		return nil, err
	}
	if err := ro.ApplyTo(serverConfig); err != nil {
		return nil, err
	}
	if err := opts.APIEnablement.ApplyTo(&serverConfig.Config, extensionsapiserver.DefaultAPIResourceConfigSource(), extensionsapiserver.Scheme); err != nil {
		return nil, err
	}
	serverConfig.ExternalAddress = "127.0.0.1:443" // what secure serving would derive; only discovery uses it
	serverConfig.RESTOptionsGetter = noStorage{}
	serverConfig.LoopbackClientConfig = &rest.Config{Host: "http://127.0.0.1:1"}
	serverConfig.SharedInformerFactory = informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	// As pkg/cmd/server/options.CustomResourceDefinitionsServerOptions.Config sets them.
	getDefs := openapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(getDefs, openapinamer.NewDefinitionNamer(extensionsapiserver.Scheme, scheme.Scheme))
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(getDefs, openapinamer.NewDefinitionNamer(extensionsapiserver.Scheme, scheme.Scheme))

	config := &extensionsapiserver.Config{
		GenericConfig: serverConfig,
		ExtraConfig:   extensionsapiserver.ExtraConfig{CRDRESTOptionsGetter: noStorage{}},
	}
	server, err := config.Complete().New(genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("creating apiextensions-apiserver: %w", err)
	}
	return server.GenericAPIServer.PrepareRun().Handler, nil
}

// noStorage gives every REST storage a store that is never called: building the routes needs one, serving the
// OpenAPI documents does not.
type noStorage struct{}

func (noStorage) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{GroupResource: resource},
		ResourcePrefix: resource.Group + "/" + resource.Resource,
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error), func() runtime.Object,
			func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			return unusedStore{}, func() {}, nil
		},
	}, nil
}

// unusedStore fails every call: nothing reads or writes objects while the documents are built.
type unusedStore struct{ storage.Interface }

var errUnused = errors.New("openapigen has no storage")

func (unusedStore) Watch(context.Context, string, storage.ListOptions) (watch.Interface, error) {
	return nil, errUnused
}
func (unusedStore) ReadinessCheck() error { return errUnused }

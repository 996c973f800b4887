// Package openapi builds the OpenAPI documents and apply type converter of custom resources as kube-apiserver
// does, without importing upstream's controller/openapi/builder: that package drags the apiserver endpoints,
// client-go's clientset and gRPC into the build, and does not belong in the wasm engine.
//
// What it reproduces, from k8s.io/apiextensions-apiserver v0.37.2:
//
//   - BuildV3, BuildV3WithOptions and BuildV2 are builder.BuildOpenAPIV3 and builder.BuildOpenAPIV2: the same
//     paths, operations and parameters, and the same definitions, because the document is assembled by the same
//     kube-openapi builders (builder3, builder) from the same generated definitions. What is ours is the input to
//     those builders: the schema preparation (structural check, unfolding, metadata and type meta, embedded
//     resources, list kind) and the route table upstream registers on a go-restful WebService.
//   - Models and TypeConverter are customresource_handler.go's buildOpenAPIModelsForApply and the type converter
//     choice around it, which managedFields and server-side apply run on.
//
// One knowingly narrower spot: definition names that client-go's scheme registers as kinds get an
// x-kubernetes-group-version-kind extension upstream. This package knows those registrations only for the
// definitions it ships (metadata, options, Status, Scale), so a CRD whose reversed group, version and kind spell a
// built-in type's name (group apps.api.k8s.io, version v1, kind Deployment) would miss the extension there.
package openapi

// Package apiserver is the engine's REST layer: it routes Kubernetes API requests for CustomResourceDefinitions
// and custom resources, runs each through the same phases kube-apiserver does (decode, coerce, default, admit,
// validate, convert, store) and answers with upstream's bodies and status codes.
//
// The files follow the concerns of a request. Where CRDs and custom resources both have a verb, its file holds
// both, beside what they share, so that the one path they take is in one place:
//
//	server.go         Server, Config, ServeHTTP: the split into CRD, custom resource and non-resource requests
//	cr.go             custom resource requests: finding the CRD and version that serve them, routing to verbs
//	crd.go            CRD requests: routing to verbs
//	create.go         POST: create options, the registry's create (name generation, dry run)
//	update.go         PUT: update options, the registry's update with optimistic concurrency
//	patch.go          PATCH: its one set-up (patch type, options, body), JSON, merge and strategic merge
//	                  patches, server-side apply
//	delete.go         DELETE and deletecollection: delete options, preconditions, finalizers
//	list.go           list options and selection, reading a page at a resourceVersion
//	watch.go          watch streams, as the watch cache serves them
//	scale.go          the /scale subresource of custom resources
//	decode.go         request bodies and query options: size limit, media type, fieldValidation, decode errors
//	storage.go        storage keys, encoding of stored objects, storage errors as API errors
//	storedcopy*.go    a create's answer decoded from a copy of what it wrote, natively; not in js/wasm
//	jsonenc*.go       custom resources written as encoding/json writes them, natively; not in js/wasm
//	fieldmanagers.go  who a write is recorded as in managedFields, and the CRD endpoint's field managers
//	controllers.go    the CRD controllers (names, establishing, finalizing), run after every CRD write
//	                  (after a create's answer, before any later request: settleControllers)
//	settle*.go        a create's controllers in the background, natively; not in js/wasm
//	serving.go        a CRD's serving state: schemas, strategies, field managers, columns of each version
//	codec.go          decoding, coercion, defaulting and conversion of custom resources
//	respond.go        warnings, errors as Status, output media types, Table and PartialObjectMetadata
//	crdtable.go       the CRD table (kubectl get crd)
//	discovery.go      /version, /api, /apis and group and version discovery
//	aggregated.go     aggregated discovery (/apis as one document)
//	openapi.go        /openapi/v2 and /openapi/v3
//	openapicache.go   their documents, built once per CRD change and merged per group/version
package apiserver

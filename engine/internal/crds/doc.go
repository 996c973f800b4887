// Package crds is the CustomResourceDefinition half of kube-apiserver v1.37, rebuilt from the upstream
// apiextensions packages that compile for GOOS=js: decoding a request body, the registry strategy
// (defaulting, validation, generation, warnings), the controllers that fill in status (names,
// Established, NonStructuralSchema, KubernetesAPIApprovalPolicyConformant), deletion with the
// customresourcecleanup finalizer, and the managedFields type converter.
//
// Upstream keeps CRDs in the internal (hub) version and runs its controllers asynchronously against a
// watch cache. This package works on apiextensions/v1 objects, which is what the REST layer stores, and
// converts to the internal version only where upstream code needs it (validation), so every message and
// every field path is the one upstream produces. The controllers become plain functions the REST layer
// calls after each CRD write; what they would eventually write is computed at once.
//
// The upstream packages that hold this behaviour (registry/customresourcedefinition, controller/*) import
// etcd and client-go informers and cannot be built for wasm, so their logic is written again here from
// reading them; each function names the upstream code it follows.
package crds

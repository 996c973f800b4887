// Package etcdstore keeps the engine's objects in etcd, as kube-apiserver does: Store implements
// storage.Interface on the etcd v3 client, with each object at the key the engine gives it (/registry/...) and
// its resourceVersion the key's ModRevision. Writes are etcd transactions that compare revisions, so several
// servers can share one etcd (replicas behind a load balancer) with the engine's optimistic concurrency intact.
//
// StartEmbedded runs an etcd inside the process, for a server that should keep its objects across restarts
// without an etcd cluster to talk to; OpenEmbedded also returns a Store that calls that etcd in the process,
// without gRPC, while the etcd still serves other clients on its loopback URL.
//
// The package lives in server/ because the etcd client brings gRPC and the network with it; the engine only
// knows storage.Interface, and a dependency test keeps go.etcd.io out of it.
package etcdstore

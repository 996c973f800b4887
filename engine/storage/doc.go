// Package storage defines where the engine keeps objects (Interface) and provides the in-memory implementation
// used in the browser and, by default, in the server. The server adds an etcd implementation of the same
// Interface.
package storage

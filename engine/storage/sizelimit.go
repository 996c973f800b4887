package storage

import (
	"errors"
	"fmt"
)

// The memory store refuses the writes that kube-apiserver's etcd refuses for their size, in the same words, so
// that an object which the real server cannot store cannot be stored here either (the engine passes the text
// through as a 500 and retries a create, update or patch without managedFields on it, as upstream's handlers do).
//
// The limits are on the request that carries the write, not on the object: kube-apiserver's etcd3 store writes
// with a transaction (go.etcd.io/etcd/client/v3/kubernetes OptimisticPut: if the key's mod revision is the
// expected one, put the key and the value; on an update, else get the key), and two limits apply to it in turn.
const (
	// etcdClientMaxSend is the etcd client's limit on a gRPC message it sends, the encoded TxnRequest
	// (defaultMaxCallSendMsgSize in go.etcd.io/etcd/client/v3 options.go, which kube-apiserver does not
	// change). The client refuses a larger one before sending it, with a gRPC ResourceExhausted status.
	etcdClientMaxSend = 2 * 1024 * 1024
	// etcdMaxRequestBytes is the etcd server's limit on the raft request that carries the transaction
	// (DefaultMaxRequestBytes in go.etcd.io/etcd/server/v3 embed/config.go; --max-request-bytes), checked in
	// processInternalRaftRequestOnce on the marshalled InternalRaftRequest.
	etcdMaxRequestBytes = 3 * 1024 * 1024 / 2
	// raftHeaderBytes is what the InternalRaftRequest adds to the transaction besides its own field tag and
	// length: the header (field 100: a 2-byte tag, a length, and the request ID as a varint). The ID is the
	// member ID's low 16 bits above a timestamp, 8 to 10 bytes as a varint; 9 is that of a single member
	// with etcd's default name and URLs (member 8e9e05c52164694d), so the bound may be off by a byte for others.
	raftHeaderBytes = 2 + 1 + 1 + 9
)

// errRequestTooLarge is the etcd server's refusal of a raft request over its limit (rpctypes.ErrRequestTooLarge),
// the text kube-apiserver answers with.
var errRequestTooLarge = errors.New("etcdserver: request is too large")

// checkWriteSize returns the error etcd would answer a write of value at key with for its size, or nil. The
// expected revision is the mod revision the transaction compares (0 for a create); update adds the else branch
// of an update's transaction.
func checkWriteSize(key string, value []byte, expected int64, update bool) error {
	k := len(key)
	// Compare{target: MOD, key, mod_revision}: result EQUAL is proto3's zero and not encoded; the mod_revision of
	// the oneof is encoded even when it is 0.
	compare := 2 + field(k) + 1 + varintLen(uint64(expected))
	// RequestOp{request_put: PutRequest{key, value}}: the lease is 0 and not encoded.
	put := field(field(k) + field(len(value)))
	txn := field(compare) + field(put)
	if update {
		// RequestOp{request_range: RangeRequest{key}}.
		txn += field(field(field(k)))
	}
	if txn > etcdClientMaxSend {
		return fmt.Errorf("rpc error: code = ResourceExhausted desc = trying to send message larger than max (%d vs. %d)", txn, etcdClientMaxSend)
	}
	if raftHeaderBytes+field(txn) > etcdMaxRequestBytes {
		return errRequestTooLarge
	}
	return nil
}

// field is the encoded size of a length-delimited protobuf field of n bytes with a one-byte tag.
func field(n int) int { return 1 + varintLen(uint64(n)) + n }

// varintLen is the size of v as a protobuf varint.
func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

package storage

import (
	"bytes"
	"context"
	"testing"
)

// TestMemoryWriteSize: the memory store refuses writes over etcd's limits with etcd's words, before it looks at
// the key (as etcd refuses the transaction before evaluating it), and keeps what it held.
func TestMemoryWriteSize(t *testing.T) {
	const key = "/registry/apiextensions.kubernetes.io/objsize.example.com/blobs/default/b"
	ctx := context.Background()
	// largest is the largest value a create at key may carry: the request limit less the key, which the
	// transaction carries twice (compared and put), and the framing.
	largest := -1
	for v := etcdMaxRequestBytes - 2*len(key) - 100; v < etcdMaxRequestBytes; v++ {
		if checkWriteSize(key, make([]byte, v), 0, false) == nil {
			largest = v
		}
	}
	if largest < etcdMaxRequestBytes-2*len(key)-48 {
		t.Fatalf("the largest value created is %d bytes, want within 48 bytes of %d less twice the key", largest, etcdMaxRequestBytes)
	}
	const tooLarge = "etcdserver: request is too large"
	for _, tc := range []struct {
		name   string
		update bool
		size   int
		want   string
	}{
		{"create at the limit", false, largest, ""},
		{"create over the limit", false, largest + 1, tooLarge},
		{"update over the limit", true, largest, tooLarge},
		{"update of 1 MiB", true, 1 << 20, ""},
		{"create over the send limit", false, 3 << 20, "rpc error: code = ResourceExhausted desc = trying to send message larger than max (3145899 vs. 2097152)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewMemory()
			rev, err := s.Create(ctx, key, []byte("small"))
			if err != nil {
				t.Fatal(err)
			}
			value := bytes.Repeat([]byte("x"), tc.size)
			if tc.update {
				_, err = s.Update(ctx, key, value, rev)
			} else if tc.want != "" {
				// Over a limit, the write is refused before the key is looked at.
				_, err = s.Create(ctx, key, value)
			} else {
				_, err = s.Create(ctx, key[:len(key)-1]+"c", value)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%v, want none", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("%v, want %q", err, tc.want)
			}
			if o, _ := s.Get(ctx, key); tc.want != "" && string(o.Value) != "small" {
				t.Errorf("the key holds %d bytes after a refused write, want its old value", len(o.Value))
			}
		})
	}
}

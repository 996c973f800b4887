package etcdstore

import (
	"time"

	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/utils/clock"
)

// StartCompactor compacts etcd's history every interval, as kube-apiserver does (--etcd-compaction-interval),
// with its compactor: each interval one of the servers sharing the cluster wins a compare-and-swap on the
// version of etcd's compact_rev_key, and compacts away the revisions older than the one that key recorded an
// interval before; the others learn the new version and try again an interval later, so a replica that stops
// is taken over. Without compaction etcd keeps every revision of every object until its quota is exhausted and
// it refuses all writes. The first compaction happens two intervals after the start; Close stops it. An
// interval of 0 or less compacts nothing.
func (s *Store) StartCompactor(interval time.Duration) {
	if interval <= 0 || s.stopCompactor != nil {
		return
	}
	s.stopCompactor = etcd3.NewCompactor(s.client, interval, clock.RealClock{}, nil).Stop
}

// Command loadbench reports the write and read throughput of crdplay-server's API on each storage: requests
// per second and latency percentiles with concurrent clients over loopback HTTP. It is a report for
// `make bench`, not a test: it prints a table and fails only when a request fails.
//
//	go run ./tools/loadbench [-clients 8] [-duration 5s] [-storage memory,etcd] [-etcd-unsafe-no-fsync] [-writes-only] [-cpuprofile F]
//
// Each storage gets a fresh server (etcd: an embedded etcd in a temporary directory, as
// `crdplay-server --storage etcd --etcd-embedded` runs it) with the documentation's CronTab CRD. The write
// phase creates CronTabs (POST, each a new object); the read phase GETs objects that the write phase made,
// chosen round-robin, so reads hit storage rather than one hot key.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"crdplay/server"
	"crdplay/tools/loadbench/httpload"
)

func main() {
	clients := flag.Int("clients", 8, "concurrent clients")
	duration := flag.Duration("duration", 5*time.Second, "length of each phase")
	storages := flag.String("storage", "memory,etcd", "comma-separated storages to measure")
	noFsync := flag.Bool("etcd-unsafe-no-fsync", false, "run the embedded etcd without fsync (crdplay-server's benchmark setting; the oracle's etcd runs so)")
	writesOnly := flag.Bool("writes-only", false, "measure the write phase alone (a profile of the creates)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (server included) to `file`")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}

	durability := "etcd fsyncs every write"
	if *noFsync {
		durability = "etcd WITHOUT fsync (-etcd-unsafe-no-fsync)"
	}
	fmt.Printf("API throughput: %d concurrent clients, %s per phase, loopback HTTP/1.1 keep-alive; %s\n\n", *clients, *duration, durability)
	fmt.Printf("%-8s %-36s %10s %10s %10s %9s\n", "storage", "phase", "req/s", "p50", "p99", "requests")
	failed := false
	for _, name := range strings.Split(*storages, ",") {
		rows, err := measure(name, *clients, *duration, *noFsync, *writesOnly)
		for _, r := range rows {
			fmt.Printf("%-8s %-36s %10.0f %10s %10s %9d\n", name, r.Phase, r.RPS, r.P50, r.P99, r.N)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadbench: %s: %v\n", name, err)
			failed = true
		}
	}
	if failed {
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// measure starts a server on the named storage and runs the phases against it.
func measure(storage string, clients int, d time.Duration, noFsync, writesOnly bool) ([]httpload.Row, error) {
	opts := server.Options{Storage: storage}
	if storage == server.StorageEtcd {
		dir, err := os.MkdirTemp("", "loadbench-etcd-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		opts.Etcd = server.EtcdOptions{Embedded: true, DataDir: dir, UnsafeNoFsync: noFsync}
	}
	h, err := server.NewHandler(opts)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, ln, h, time.Second) }()
	defer func() { cancel(); <-done }()

	base := "http://" + ln.Addr().String()
	c := httpload.Client(clients)
	if err := httpload.InstallCronTab(c, base); err != nil {
		return nil, err
	}

	write, err := httpload.Run(clients, d, httpload.Creates(c, base, "ct"))
	rows := []httpload.Row{write.Row("write: POST create")}
	if err != nil {
		return rows, fmt.Errorf("write phase: %w", err)
	}
	if writesOnly {
		return rows, nil
	}
	made := int64(len(write.Lat))
	var next atomic.Int64
	read, err := httpload.Run(clients, d, func() error {
		i := next.Add(1)%made + 1
		_, err := httpload.Do(c, "GET", fmt.Sprintf("%s/ct-%d", base+httpload.Collection, i), "", http.StatusOK)
		return err
	})
	rows = append(rows, read.Row("read: GET one object"))
	if err != nil {
		return rows, fmt.Errorf("read phase: %w", err)
	}
	return rows, nil
}

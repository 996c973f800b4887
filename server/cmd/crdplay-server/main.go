// Command crdplay-server serves the crdplay engine (the Kubernetes API for CustomResourceDefinitions and the
// resources they define) over HTTP.
//
//	crdplay-server [--addr 127.0.0.1:8080] [--storage memory] [--log-requests]
//
// It stops gracefully on SIGINT or SIGTERM; a second signal stops it at once.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"crdplay/server"
)

// shutdownGrace is how long requests in flight may take to finish after a stop signal.
const shutdownGrace = 5 * time.Second

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen on `host:port`")
	storage := flag.String("storage", server.StorageMemory, "where objects are kept: memory (lost on exit)")
	logRequests := flag.Bool("log-requests", false, "log one line per request to stderr")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: crdplay-server [flags]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fatalUsage("unexpected arguments: %v", flag.Args())
	}

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts := server.Options{Storage: *storage}
	if *logRequests {
		opts.Log = log
	}
	h, err := server.NewHandler(opts)
	if err != nil {
		fatalUsage("--storage=%s: %v", *storage, err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Error("cannot listen", "err", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	signalled := make(chan struct{})
	go func() {
		<-ctx.Done()
		stop() // restore default handling: a second signal kills the process
		log.Info("shutting down; interrupt again to stop at once")
		close(signalled)
	}()
	log.Info("serving", "url", "http://"+ln.Addr().String(), "storage", *storage)
	if err := server.Serve(ctx, ln, h, shutdownGrace); err != nil {
		log.Error("serve", "err", err)
		os.Exit(1)
	}
	<-signalled // Serve returns nil only after ctx is done; keep the log lines in order
	log.Info("stopped")
}

// fatalUsage reports a command-line mistake the way package flag does: message, usage, exit status 2.
func fatalUsage(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "crdplay-server: "+format+"\n", args...)
	flag.Usage()
	os.Exit(2)
}

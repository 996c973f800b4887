package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"k8s.io/klog/v2"
)

// Exit statuses: what CI reads.
const (
	exitOK       = 0 // nothing is an error
	exitFindings = 1 // something is an error: a refusal, a failed check, an error-severity finding
	exitInput    = 2 // the input itself is wrong: unreadable, not YAML, not a CRD, a kind no CRD defines
)

func main() {
	// Upstream code logs through klog what a server would log (a field manager's "[SHOULD NOT HAPPEN]"
	// when a stored value no longer fits a changed type): server logs, not the check's output.
	klog.SetSlogLogger(slog.New(slog.DiscardHandler))
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `crdplay checks CustomResourceDefinitions and their objects with the Kubernetes API server's own code,
in-process: no cluster, no network.

Usage:
  crdplay check --old OLD.yaml --new NEW.yaml [OBJECTS.yaml ...] [-o text|json]
      An upgrade: the new CRD as an update of the old one, with the objects stored under the old one.
  crdplay check --new CRD.yaml [OBJECTS.yaml ...] [-o text|json]     (--crd is the same as --new)
      A create: the CRD, then each object, as kubectl create -f would send them.

Exit status: 0 when nothing is an error, 1 when something is, 2 when the input is wrong.
Run 'crdplay check --help' for the flags.
`

// run is the command: args without the program name, standard input the process's. It returns the exit
// status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, os.Stdin, stdout, stderr)
}

// runWith is run with the standard input given ("-" among the inputs reads it).
func runWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitInput
	}
	switch args[0] {
	case "check":
		return check(ctx, args[1:], stdin, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "crdplay: unknown command %q\n\n%s", args[0], usage)
		return exitInput
	}
}

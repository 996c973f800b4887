package kubectl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/pflag"
)

// Options configure one run.
type Options struct {
	// Files are the files -f can name, by name (e.g. "crd.yaml", "objects.yaml"): the playground's editors.
	Files map[string]string `json:"files,omitempty"`
	// Namespace is the namespace of the current context, used when the command line has no -n;
	// empty means "default".
	Namespace string `json:"namespace,omitempty"`
}

// Result is what the command printed and every HTTP exchange it made.
type Result struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// Output is stdout and stderr interleaved as a terminal shows them (a warning before the line it
	// concerns, an error after the rows that were found).
	Output   string     `json:"output"`
	ExitCode int        `json:"exitCode"`
	Requests []Exchange `json:"requests"`
}

// Run splits commandLine like a shell does (see SplitCommandLine) and runs it. A leading "kubectl" (or "k")
// word is optional.
func Run(ctx context.Context, h http.Handler, commandLine string, opts Options) Result {
	args, err := SplitCommandLine(commandLine)
	if err != nil {
		msg := "error: " + err.Error() + "\n"
		return Result{Stderr: msg, Output: msg, ExitCode: 2, Requests: []Exchange{}}
	}
	return RunArgs(ctx, h, args, opts)
}

// RunArgs runs a command given as words, e.g. ["kubectl", "get", "ct", "-o", "wide"]; the leading "kubectl"
// (or "k") is optional.
func RunArgs(ctx context.Context, h http.Handler, args []string, opts Options) (res Result) {
	// "kubectl" is optional, and so is "k", the alias most people give it.
	if len(args) > 0 && (args[0] == "kubectl" || args[0] == "k") {
		args = args[1:]
	}
	k := &kubectl{ctx: ctx, opts: opts, warned: map[string]bool{}}
	k.out.all, k.errOut.all = &k.all, &k.all
	k.client = &client{ctx: ctx, h: h, log: &k.log, warnings: k.warn}
	defer func() {
		// A bug in the emulation must not take the page down: report it like kubectl reports a crash.
		if p := recover(); p != nil {
			fmt.Fprintf(&k.errOut, "crdplay: the playground's kubectl failed on this command (please report it): %v\n", p)
			res = k.result(1)
		}
	}()
	code := k.execute(args)
	return k.result(code)
}

func (k *kubectl) result(code int) Result {
	reqs := k.log
	if reqs == nil {
		reqs = []Exchange{}
	}
	return Result{Stdout: k.out.String(), Stderr: k.errOut.String(), Output: k.all.String(), ExitCode: code, Requests: reqs}
}

// kubectl is one run: its output, the requests made so far and what it learnt from the server.
type kubectl struct {
	ctx    context.Context
	opts   Options
	client *client
	out    stream
	errOut stream
	all    bytes.Buffer
	log    []Exchange
	warned map[string]bool

	disc    *discovery
	openapi *openAPIClient
	// openapiV2Fetched: /openapi/v2 was requested once already.
	openapiV2Fetched bool
	// crdsListed: the CRDs were listed once already (field validation's CRD finder).
	crdsListed bool

	// Global flags.
	namespace string
	// explicitNamespace is true when -n/--namespace was given (kubectl's enforceNamespace).
	explicitNamespace bool
}

// stream is stdout or stderr: its own text, and the terminal's, where both meet in order.
type stream struct {
	own bytes.Buffer
	all *bytes.Buffer
}

func (s *stream) Write(p []byte) (int, error) {
	s.own.Write(p)
	return s.all.Write(p)
}

func (s *stream) WriteString(x string) (int, error) { return s.Write([]byte(x)) }

func (s *stream) String() string { return s.own.String() }

// warn is kubectl's warning writer: each distinct server warning once, as "Warning: ...".
func (k *kubectl) warn(msg string) {
	if k.warned[msg] {
		return
	}
	k.warned[msg] = true
	fmt.Fprintf(&k.errOut, "Warning: %s\n", msg)
}

// exitError ends a command with an exit code and no further message (kubectl's cmdutil.ErrExit).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// execute runs the command line's words and returns the exit code.
func (k *kubectl) execute(args []string) int {
	t := k.newTree()
	// kubectl looks for a plugin when no built-in command matches; the playground has none, so what is left
	// is its error for flags placed before the (unknown) command name.
	if name, _ := commandName(args, t.global); name != "" && name != "help" && t.find(name) == nil && strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(&k.errOut, "Error: flags cannot be placed before plugin name: %s\n", args[0])
		return 1
	}
	err := t.run(append([]string{}, args...))
	if err == nil {
		return 0
	}
	var he *helpError
	if errors.As(err, &he) {
		k.printHelp(he.cmd)
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	msg := k.errorMessage(err)
	if msg != "" {
		if !strings.HasSuffix(msg, "\n") {
			msg += "\n"
		}
		k.errOut.WriteString(msg)
	}
	return 1
}

func (k *kubectl) printHelp(c *command) {
	if c.parent == nil {
		k.out.WriteString(rootHelp)
		return
	}
	fmt.Fprintf(&k.out, "%s\n\nUsage:\n  kubectl %s\n\n%s\n", c.Short, c.Use, helpNote)
}

// newTree builds kubectl's commands: those the playground emulates, and every other kubectl command as a
// stub, so that unknown commands get kubectl's suggestions.
func (k *kubectl) newTree() *tree {
	root := &command{Use: "kubectl", Short: "kubectl controls the Kubernetes cluster manager"}
	root.RunE = func(cmd *command, args []string) error {
		k.out.WriteString(rootHelp)
		return nil
	}
	t := &tree{root: root, global: pflag.NewFlagSet("kubectl", pflag.ContinueOnError), before: k.completeNamespace}
	t.global.SetOutput(discard{})
	addGlobalFlags(t.global, &k.namespace)
	implemented := map[string]func() *command{
		"create":        k.newCreateCommand,
		"explain":       k.newExplainCommand,
		"get":           k.newGetCommand,
		"delete":        k.newDeleteCommand,
		"scale":         k.newScaleCommand,
		"describe":      k.newDescribeCommand,
		"apply":         k.newApplyCommand,
		"patch":         k.newPatchCommand,
		"replace":       k.newReplaceCommand,
		"wait":          k.newWaitCommand,
		"label":         k.newLabelCommand,
		"annotate":      k.newAnnotateCommand,
		"version":       k.newVersionCommand,
		"api-versions":  k.newAPIVersionsCommand,
		"api-resources": k.newAPIResourcesCommand,
	}
	// Commands in kubectl's order: cobra suggests near misses of an unknown command in this order.
	for _, s := range kubectlCommands {
		if newCmd, ok := implemented[s.name]; ok {
			t.add(newCmd())
			continue
		}
		t.add(s.command())
	}
	return t
}

// completeNamespace is the namespace of the command once the flags are parsed: -n's, or the context's, or
// "default". -n "" is no namespace at all, as for kubectl's config loader.
func (k *kubectl) completeNamespace() {
	k.explicitNamespace = k.namespace != ""
	if k.namespace == "" {
		k.namespace = k.opts.Namespace
		if k.namespace == "" {
			k.namespace = "default"
		}
	}
}

const helpNote = "(The playground's kubectl does not reproduce kubectl's full help; see https://kubernetes.io/docs/reference/kubectl/.)"

type stubCommand struct {
	name, short string
	suggestFor  []string
}

// command is the stub's command: it says the command is not supported.
func (s stubCommand) command() *command {
	return &command{
		Use:                s.name,
		Short:              s.short,
		SuggestFor:         s.suggestFor,
		DisableFlagParsing: true,
		hidden:             s.name == "alpha", // no alpha commands in a release build: never suggested
		RunE: func(cmd *command, args []string) error {
			return &notSupportedError{what: "kubectl " + s.name}
		},
	}
}

// kubectlCommands are kubectl's commands in the order kubectl adds them. Those the playground does not emulate
// are stubs: they exist so that unknown commands get kubectl's suggestions, and say that they are not supported.
var kubectlCommands = []stubCommand{
	{name: "create"},
	{name: "expose", short: "Take a replication controller, service, deployment or pod and expose it as a new Kubernetes service"},
	{name: "run", short: "Run a particular image on the cluster"},
	{name: "set", short: "Set specific features on objects"},
	{name: "explain"},
	{name: "get"},
	{name: "edit", short: "Edit a resource on the server"},
	{name: "delete"},
	{name: "rollout", short: "Manage the rollout of a resource"},
	{name: "scale"},
	{name: "autoscale", short: "Auto-scale a deployment, replica set, stateful set, or replication controller"},
	{name: "certificate", short: "Modify certificate resources"},
	{name: "cluster-info", short: "Display cluster information"},
	{name: "top", short: "Display resource (CPU/memory) usage", suggestFor: []string{"stats"}},
	{name: "cordon", short: "Mark node as unschedulable"},
	{name: "uncordon", short: "Mark node as schedulable"},
	{name: "drain", short: "Drain node in preparation for maintenance"},
	{name: "taint", short: "Update the taints on one or more nodes"},
	{name: "describe"},
	{name: "logs", short: "Print the logs for a container in a pod"},
	{name: "attach", short: "Attach to a running container"},
	{name: "exec", short: "Execute a command in a container"},
	{name: "port-forward", short: "Forward one or more local ports to a pod"},
	{name: "proxy", short: "Run a proxy to the Kubernetes API server"},
	{name: "cp", short: "Copy files and directories to and from containers"},
	{name: "auth", short: "Inspect authorization"},
	{name: "debug", short: "Create debugging sessions for troubleshooting workloads and nodes"},
	{name: "events", short: "List events"},
	{name: "diff", short: "Diff the live version against a would-be applied version"},
	{name: "apply"},
	{name: "patch"},
	{name: "replace"},
	{name: "wait"},
	{name: "kustomize", short: "Build a kustomization target from a directory or URL"},
	{name: "label"},
	{name: "annotate"},
	{name: "completion", short: "Output shell completion code for the specified shell (bash, zsh, fish, or powershell)"},
	{name: "alpha", short: "Commands for features in alpha"},
	{name: "config", short: "Modify kubeconfig files"},
	{name: "plugin", short: "Provides utilities for interacting with plugins"},
	{name: "version"},
	{name: "api-versions"},
	{name: "api-resources"},
	{name: "options", short: "Print the list of flags inherited by all commands"},
	{name: "kuberc", short: "Manage kuberc configuration files"},
}

// rootHelp is what `kubectl` alone prints.
const rootHelp = `kubectl controls the Kubernetes cluster manager.

 Find more information at: https://kubernetes.io/docs/reference/kubectl/

Basic Commands (Beginner):
  create          Create a resource from a file or from stdin
  expose          Take a replication controller, service, deployment or pod and expose it as a new Kubernetes service
  run             Run a particular image on the cluster
  set             Set specific features on objects

Basic Commands (Intermediate):
  explain         Get documentation for a resource
  get             Display one or many resources
  edit            Edit a resource on the server
  delete          Delete resources by file names, stdin, resources and names, or by resources and label selector

Deploy Commands:
  rollout         Manage the rollout of a resource
  scale           Set a new size for a deployment, replica set, or replication controller
  autoscale       Auto-scale a deployment, replica set, stateful set, or replication controller

Cluster Management Commands:
  certificate     Modify certificate resources
  cluster-info    Display cluster information
  top             Display resource (CPU/memory) usage
  cordon          Mark node as unschedulable
  uncordon        Mark node as schedulable
  drain           Drain node in preparation for maintenance
  taint           Update the taints on one or more nodes

Troubleshooting and Debugging Commands:
  describe        Show details of a specific resource or group of resources
  logs            Print the logs for a container in a pod
  attach          Attach to a running container
  exec            Execute a command in a container
  port-forward    Forward one or more local ports to a pod
  proxy           Run a proxy to the Kubernetes API server
  cp              Copy files and directories to and from containers
  auth            Inspect authorization
  debug           Create debugging sessions for troubleshooting workloads and nodes
  events          List events

Advanced Commands:
  diff            Diff the live version against a would-be applied version
  apply           Apply a configuration to a resource by file name or stdin
  patch           Update fields of a resource
  replace         Replace a resource by file name or stdin
  wait            Wait for a specific condition on one or many resources
  kustomize       Build a kustomization target from a directory or URL

Settings Commands:
  label           Update the labels on a resource
  annotate        Update the annotations on a resource
  completion      Output shell completion code for the specified shell (bash, zsh, fish, or powershell)

Subcommands provided by plugins:

Other Commands:
  api-resources   Print the supported API resources on the server
  api-versions    Print the supported API versions on the server, in the form of "group/version"
  config          Modify kubeconfig files
  kuberc          Manage kuberc configuration files
  plugin          Provides utilities for interacting with plugins
  version         Print the client and server version information

Usage:
  kubectl [flags] [options]

Use "kubectl <command> --help" for more information about a given command.
Use "kubectl options" for a list of global command-line options (applies to all commands).
`

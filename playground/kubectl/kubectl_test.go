package kubectl

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"crdplay/engine"
)

func TestSplitCommandLine(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "kubectl get ct", want: []string{"kubectl", "get", "ct"}},
		{in: "  kubectl\tget   ct  ", want: []string{"kubectl", "get", "ct"}},
		{in: `kubectl patch ct x -p '{"spec":{"replicas":3}}'`, want: []string{"kubectl", "patch", "ct", "x", "-p", `{"spec":{"replicas":3}}`}},
		{in: `kubectl annotate ct x note="hello world"`, want: []string{"kubectl", "annotate", "ct", "x", "note=hello world"}},
		{in: `echo "a \"quoted\" \$HOME \\ back"`, want: []string{"echo", `a "quoted" $HOME \ back`}},
		{in: `a\ b c`, want: []string{"a b", "c"}},
		{in: "a \\\nb", want: []string{"a", "b"}},
		{in: `''`, want: []string{""}},
		{in: `x '' y`, want: []string{"x", "", "y"}},
		{in: `it's'`, want: []string{"its"}},
		{in: "get ct # a comment", want: []string{"get", "ct"}},
		{in: "get a#b", want: []string{"get", "a#b"}},
		{in: `-l 'env in (a,b)'`, want: []string{"-l", "env in (a,b)"}},
		{in: `"$"`, want: []string{"$"}},
		{in: "", want: nil},
		{in: "'unterminated", wantErr: "unterminated single quote"},
		{in: `"unterminated`, wantErr: "unterminated double quote"},
		{in: "kubectl get ct | grep x", wantErr: "pipes (|)"},
		{in: "kubectl get ct > out", wantErr: "redirections (>)"},
		{in: "kubectl get ct; kubectl get crd", wantErr: "command lists (;)"},
		{in: "kubectl get ct && echo", wantErr: "command lists (&&)"},
		{in: "kubectl get $KIND", wantErr: "variables and substitutions ($)"},
		{in: `kubectl get "$(echo ct)"`, wantErr: "command substitution ($(...))"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := SplitCommandLine(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// quote quotes a word for SplitCommandLine.
func quote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

func FuzzSplitCommandLine(f *testing.F) {
	for _, s := range []string{
		"kubectl get ct -o wide",
		`kubectl patch ct x --type merge -p '{"spec":{"image":"a b"}}'`,
		`a "b \" c" d\ e # f`,
		"'", `"`, `\`, "$(x)", "a|b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := SplitCommandLine(line)
		if err != nil {
			return
		}
		if !utf8.ValidString(line) {
			return
		}
		// Quoting each word and splitting again gives the same words.
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = quote(w)
		}
		again, err := SplitCommandLine(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-split of %q: %v", quoted, err)
		}
		if len(again) != len(words) {
			t.Fatalf("re-split of %q: %q, want %q", quoted, again, words)
		}
		for i := range words {
			if again[i] != words[i] {
				t.Fatalf("re-split of %q: %q, want %q", quoted, again, words)
			}
		}
	})
}

// notFound answers every request with a 404 Status, as an API server with nothing in it would.
var notFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`))
})

// FuzzRun drives the whole command line (splitting, cobra and pflag parsing, every command's argument
// checks) with arbitrary input: it must always end with a result and an exit code, never a panic.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		"kubectl get ct -o wide",
		"kubectl apply -f crd.yaml",
		"kubectl describe ct x",
		"kubectl explain ct.spec --recursive",
		"kubectl scale ct x --replicas=-1",
		"kubectl label ct x a=b c-",
		"kubectl delete ct --all --grace-period=0 --force",
		"kubectl wait --for=condition=Ready ct/x --timeout=0",
		"kubectl get --raw /apis",
		"kubectl -n '' get ct",
		"kubectl patch ct x --type=json -p '['",
		"kubectl api-resources -o name",
	} {
		f.Add(s)
	}
	files := map[string]string{
		"crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a.b.c\n",
	}
	f.Fuzz(func(t *testing.T, line string) {
		res := Run(context.Background(), notFound, line, Options{Files: files})
		if res.ExitCode < 0 || res.ExitCode > 2 {
			t.Fatalf("%q: exit code %d", line, res.ExitCode)
		}
		if res.ExitCode != 0 && res.Stderr == "" {
			t.Fatalf("%q: exit code %d without a message", line, res.ExitCode)
		}
		if res.Requests == nil {
			t.Fatalf("%q: nil Requests (the bridge sends an array)", line)
		}
	})
}

func TestSmartLabelFor(t *testing.T) {
	// Cases from kubectl's own describe tests and from the describe outputs recorded in testdata (odd field
	// names are covered there, by the describe script).
	tests := []struct{ in, want string }{
		{"simpleField", "Simple Field"},
		{"respectPDBs", "Respect PDBs"},
		{"respectPDB", "Respect PDB"},
		{"apiURL", "API URL"},
		{"kubeAPI", "Kube API"},
		{"userUID", "User UID"},
		{"HTTPSProxy", "HTTPSProxy"},
		{"customCRDs", "Custom CRDs"},
		{"apiVersion", "API Version"},
		{"creationTimestamp", "Creation Timestamp"},
		{"uid", "UID"},
		{"cronSpec", "Cron Spec"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := smartLabelFor(tt.in); got != tt.want {
				t.Errorf("smartLabelFor(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestWrapString(t *testing.T) {
	// Cases from github.com/mitchellh/go-wordwrap's tests, which kubectl explain wraps descriptions with.
	tests := []struct {
		in   string
		lim  int
		want string
	}{
		{"", 0, ""},
		{"", 4, ""},
		{"foo", 4, "foo"},
		{"foobarbaz", 4, "foobarbaz"},
		{"foo bar baz", 4, "foo\nbar\nbaz"},
		{"foo bars bazzes", 10, "foo bars\nbazzes"},
		{"foo bar baz", 3, "foo\nbar\nbaz"},
		{"foo bar baz", 11, "foo bar baz"},
		{"foo\nb ar\nbaz", 3, "foo\nb\nar\nbaz"},
		{"foo\nb ar\nbaz", 4, "foo\nb ar\nbaz"},
		{"foo bar baz  ", 4, "foo\nbar\nbaz"},
		{"foo bar baz   \n", 4, "foo\nbar\nbaz\n"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := wrapString(tt.in, tt.lim); got != tt.want {
				t.Errorf("wrapString(%q, %d) = %q, want %q", tt.in, tt.lim, got, tt.want)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		line       string
		files      map[string]string
		wantCode   int
		wantStderr string
	}{
		{name: "shell syntax", line: "kubectl get ct | wc -l", wantCode: 2, wantStderr: "error: the playground runs one kubectl command without a shell: pipes (|)"},
		{name: "unsupported command", line: "kubectl exec -it pod -- sh", wantCode: 1, wantStderr: "error: kubectl exec is not supported by the playground's kubectl\n"},
		{name: "unsupported output", line: "kubectl get crd -o jsonpath={.items}", wantCode: 1, wantStderr: "error: -o jsonpath={.items} is not supported by the playground's kubectl\n"},
		{name: "stdin", line: "kubectl apply -f -", wantCode: 1, wantStderr: "error: reading from stdin (-f -) is not supported by the playground's kubectl\n"},
		{name: "missing file", line: "kubectl apply -f objects.yaml", wantCode: 1, wantStderr: "error: the path \"objects.yaml\" does not exist\n"},
		// The resource builder refuses resource arguments beside -f for every command, before it reads a file.
		{name: "get files and arguments", line: "kubectl get -f objects.yaml ct", wantCode: 1, wantStderr: "error: when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well\n"},
		{name: "describe files and arguments", line: "kubectl describe -f objects.yaml ct", wantCode: 1, wantStderr: "error: when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well\n"},
		{name: "kubectl word optional", line: "version --client", wantCode: 0},
		{name: "k alias", line: "k version --client", wantCode: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), h, tt.line, Options{Files: tt.files})
			if res.ExitCode != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", res.ExitCode, tt.wantCode, res.Stderr)
			}
			if !strings.HasPrefix(res.Stderr, tt.wantStderr) {
				t.Errorf("stderr %q, want it to start with %q", res.Stderr, tt.wantStderr)
			}
		})
	}
}

func TestNamespaceOption(t *testing.T) {
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files := loadFiles(t)
	for _, line := range []string{"kubectl apply -f crontab-crd.yaml", "kubectl apply -f my-crontab.yaml"} {
		if res := Run(context.Background(), h, line, Options{Files: files, Namespace: "team"}); res.ExitCode != 0 {
			t.Fatalf("%s: %s", line, res.Stderr)
		}
	}
	res := Run(context.Background(), h, "kubectl get ct -o name", Options{Namespace: "team"})
	if res.Stdout != "crontab.stable.example.com/my-new-cron-object\n" {
		t.Errorf("get in the context's namespace: %q %q", res.Stdout, res.Stderr)
	}
	res = Run(context.Background(), h, "kubectl get ct", Options{})
	if res.Stderr != "No resources found in default namespace.\n" {
		t.Errorf("get in default: %q %q", res.Stdout, res.Stderr)
	}
	// Output is what a terminal shows: the warning before the result it is about.
	res = Run(context.Background(), h, "kubectl apply -f unknown-field.yaml --validate=warn", Options{Files: files, Namespace: "team"})
	if !strings.HasPrefix(res.Output, "Warning: unknown field \"spec.someRandomField\"\n") || !strings.HasSuffix(res.Output, "configured\n") ||
		res.Output != res.Stderr+res.Stdout {
		t.Errorf("output: %q (stdout %q, stderr %q)", res.Output, res.Stdout, res.Stderr)
	}
	// Every request is in the log, in order, with what the server answered.
	res = Run(context.Background(), h, "kubectl get ct -n team -o name", Options{})
	last := res.Requests[len(res.Requests)-1]
	if last.Method != "GET" || last.Path != "/apis/stable.example.com/v1/namespaces/team/crontabs" || last.Query != "limit=500" ||
		last.Status != 200 || !strings.Contains(last.ResponseBody, `"kind":"CronTabList"`) || last.RequestHeaders["Accept"] != acceptJSON {
		t.Errorf("last request: %+v", last)
	}
}

// legacyServer answers discovery the legacy way, as the oracle's --discovery-shim does: an APIGroupList on
// /apis, then one APIResourceList per group version.
var legacyServer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api":
		_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":[],"serverAddressByClientCIDRs":null}`))
	case "/apis":
		_, _ = w.Write([]byte(`{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"stable.example.com","versions":[{"groupVersion":"stable.example.com/v1","version":"v1"},{"groupVersion":"stable.example.com/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"stable.example.com/v1","version":"v1"}}]}`))
	case "/apis/stable.example.com/v1", "/apis/stable.example.com/v1beta1":
		gv := strings.TrimPrefix(r.URL.Path, "/apis/")
		_, _ = w.Write([]byte(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"` + gv + `","resources":[{"name":"crontabs","singularName":"crontab","namespaced":true,"kind":"CronTab","verbs":["get","list"],"shortNames":["ct"],"categories":["all"]},{"name":"crontabs/status","singularName":"","namespaced":true,"kind":"CronTab","verbs":["get"]}]}`))
	case "/apis/stable.example.com/v1/namespaces/default/crontabs":
		_, _ = w.Write([]byte(`{"apiVersion":"stable.example.com/v1","kind":"CronTabList","metadata":{"resourceVersion":"7"},"items":[{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a","namespace":"default"}}]}`))
	default:
		notFound(w, r)
	}
})

func TestLegacyDiscovery(t *testing.T) {
	tests := []struct {
		line   string
		stdout string
		paths  []string
	}{
		{
			line:   "kubectl get ct -o name",
			stdout: "crontab.stable.example.com/a\n",
			paths:  []string{"/api", "/apis", "/apis/stable.example.com/v1", "/apis/stable.example.com/v1beta1", "/apis/stable.example.com/v1/namespaces/default/crontabs"},
		},
		{
			line:   "kubectl api-resources",
			stdout: "NAME       SHORTNAMES   APIVERSION              NAMESPACED   KIND\ncrontabs   ct           stable.example.com/v1   true         CronTab\n",
			paths:  []string{"/api", "/apis", "/apis/stable.example.com/v1", "/apis/stable.example.com/v1beta1"},
		},
		{
			line:   "kubectl api-versions",
			stdout: "stable.example.com/v1\nstable.example.com/v1beta1\n",
			paths:  []string{"/api", "/apis", "/apis/stable.example.com/v1", "/apis/stable.example.com/v1beta1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			res := Run(context.Background(), legacyServer, tt.line, Options{})
			if res.ExitCode != 0 || res.Stdout != tt.stdout {
				t.Errorf("exit %d, stdout %q, stderr %q; want %q", res.ExitCode, res.Stdout, res.Stderr, tt.stdout)
			}
			var paths []string
			for _, r := range res.Requests {
				paths = append(paths, r.Path)
			}
			if !reflect.DeepEqual(paths, tt.paths) {
				t.Errorf("requests %q, want %q", paths, tt.paths)
			}
		})
	}
}

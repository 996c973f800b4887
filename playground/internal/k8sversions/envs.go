package k8sversions

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
)

// envFacts is what the new-expressions environment of one compatibility version declares, for naming what a
// minor introduced.
type envFacts struct {
	overloads map[string]map[string]bool // function name -> overload IDs
	macros    map[string]bool            // "name/argCount/receiver"
	libraries map[string]bool
}

var (
	factsMu    sync.Mutex
	factsCache = map[int]*envFacts{}
)

// envSet is upstream's base environment set of compatibility version 1.minor.
func envSet(minor int) *environment.EnvSet {
	return environment.MustBaseEnvSet(version.MajorMinor(1, uint(minor)))
}

func facts(minor int) *envFacts {
	factsMu.Lock()
	defer factsMu.Unlock()
	if f, ok := factsCache[minor]; ok {
		return f
	}
	env := envSet(minor).NewExpressionsEnv()
	f := &envFacts{overloads: map[string]map[string]bool{}, macros: map[string]bool{}, libraries: map[string]bool{}}
	for name, fn := range env.Functions() {
		ids := map[string]bool{}
		for _, o := range fn.OverloadDecls() {
			ids[o.ID()] = true
		}
		f.overloads[name] = ids
	}
	for _, m := range env.Macros() {
		f.macros[macroKey(m.Function(), m.ArgCount(), m.IsReceiverStyle())] = true
	}
	for _, l := range env.Libraries() {
		f.libraries[l] = true
	}
	factsCache[minor] = f
	return f
}

func macroKey(name string, args int, receiver bool) string {
	return name + "/" + strconv.Itoa(args) + "/" + strconv.FormatBool(receiver)
}

// introduced is what the environment of compatibility version minor declares that minor-1's lacks.
type introduced struct {
	functions map[string]bool // names with at least one new overload
	macros    map[string]bool // names
	libraries []string
}

func introducedAt(minor int) introduced {
	cur, prev := facts(minor), facts(minor-1)
	in := introduced{functions: map[string]bool{}, macros: map[string]bool{}}
	for name, ids := range cur.overloads {
		for id := range ids {
			if !prev.overloads[name][id] {
				in.functions[name] = true
				break
			}
		}
	}
	for k := range cur.macros {
		if !prev.macros[k] {
			in.macros[k[:strings.Index(k, "/")]] = true
		}
	}
	for l := range cur.libraries {
		if !prev.libraries[l] {
			in.libraries = append(in.libraries, l)
		}
	}
	sort.Strings(in.libraries)
	return in
}

// errorNames finds, in cel-go's compile errors, the names the older environment did not know.
var errorNames = regexp.MustCompile(`undeclared reference to '([^']+)'|found no matching overload for '([^']+)'(?: applied to '([^']*)')?|unsupported syntax '([^']+)'`)

// name says what a rule that the environment of minor-1 refused (with error text) uses from the environment
// of minor: the feature (a function, macro, operator or syntax the error names) and the library that brings
// it, when the environments tell it apart. Both are empty when the error names
// nothing that minor introduced.
func name(text string, minor int) (feature, library string) {
	in := introducedAt(minor)
	for _, m := range errorNames.FindAllStringSubmatch(text, -1) {
		switch {
		case m[1] != "" || m[2] != "":
			n := m[1] + m[2]
			if isOperator(n) {
				// A language option rather than a library (cross-type numeric comparisons in 1.28): cel-go
				// shows the options only through Env.ToConfig, which would add 25 kB to the compressed wasm,
				// so the operator is named with its argument types.
				if m[3] != "" {
					return n + " applied to " + m[3], ""
				}
				return n, ""
			}
			if in.macros[n] {
				// Macros come from a library: name it when the minor brought exactly one.
				if len(in.libraries) == 1 {
					return n, in.libraries[0]
				}
				return n, libraryFor(n, in.libraries)
			}
			if in.functions[n] || hasNamespace(in.functions, n) {
				return n, libraryFor(n, in.libraries)
			}
		case m[4] != "":
			return "syntax '" + m[4] + "'", ""
		}
	}
	return "", ""
}

// isOperator is true for cel-go's operator function names (_<_, _[_], @in).
func isOperator(n string) bool { return strings.HasPrefix(n, "_") || strings.HasPrefix(n, "@") }

// hasNamespace is true when n is the namespace of a new function (sets for sets.contains): cel-go reports
// the namespace as the undeclared reference.
func hasNamespace(functions map[string]bool, n string) bool {
	for f := range functions {
		if strings.HasPrefix(f, n+".") {
			return true
		}
	}
	return false
}

// libraryFor picks, among the libraries a minor introduced, the one named after the function or its
// namespace (kubernetes.net.ip for ip, cel.lib.ext.sets for sets.contains); none when no name matches,
// since a minor can also extend a library it already had (the strings library's format in 1.29).
func libraryFor(fn string, libraries []string) string {
	head := strings.ToLower(strings.SplitN(fn, ".", 2)[0])
	for _, l := range libraries {
		if strings.ToLower(l[strings.LastIndex(l, ".")+1:]) == head {
			return l
		}
	}
	return ""
}

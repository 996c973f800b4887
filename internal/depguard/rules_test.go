package depguard

import (
	"strings"
	"testing"
)

// graphOf builds an import graph from "pkg imp imp ..." lines, as go list prints them for loadGraph: a
// leading "+" marks a root, "!" a package of the standard library.
func graphOf(lines ...string) importGraph {
	return parseGraph(strings.Join(lines, "\n"))
}

// rootOf is a package of the guard's tree.
func rootOf(g guard) string {
	return strings.TrimSuffix(g.pattern, "/...")
}

// TestBansCatch proves that every ban of every guard fails when its tree reaches the banned package, naming
// the ban, its reason and the import chain, on graphs built by hand (the real graph is clean, so
// TestDependencies alone would never show that a rule can fail).
func TestBansCatch(t *testing.T) {
	for _, g := range guards {
		for _, b := range g.bans {
			t.Run(g.pattern+"/"+b.prefix, func(t *testing.T) {
				root := rootOf(g)
				for _, hit := range []string{b.prefix, b.prefix + "/sub"} {
					graph := graphOf("+"+root+" example.com/lib", "example.com/lib "+hit, hit)
					msgs := g.check(graph, "")
					if len(msgs) != 1 {
						t.Fatalf("reaching %s: %d message(s), want 1: %q", hit, len(msgs), msgs)
					}
					for _, want := range []string{g.pattern + " reaches " + b.prefix + " ", b.reason,
						"import chain: " + root + "\n\t\t-> example.com/lib\n\t\t-> " + hit} {
						if !strings.Contains(msgs[0], want) {
							t.Errorf("message %q lacks %q", msgs[0], want)
						}
					}
				}
				// A package that only shares the prefix's characters is not banned.
				if msgs := g.check(graphOf("+"+root+" "+b.prefix+"x", b.prefix+"x"), ""); len(msgs) != 0 {
					t.Errorf("%sx is not below %s, but: %q", b.prefix, b.prefix, msgs)
				}
			})
		}
	}
}

// TestBansAllow checks what the guards let through: syscall/js through the standard library (net/http's
// fetch transport), the bridge's own imports, a banned package reached only through the trimmed package
// in the plain graph, and another tree's imports.
func TestBansAllow(t *testing.T) {
	bridge := graphOf(
		"+crdplay/wasm syscall/js crdplay/engine crdplay/playground crdplay/playground/kubectl",
		"+crdplay/engine net/http", "+crdplay/playground crdplay/engine", "+crdplay/playground/kubectl crdplay/engine",
		"!net/http syscall/js", "!syscall/js")
	for _, g := range guards {
		t.Run(g.pattern, func(t *testing.T) {
			if msgs := g.check(bridge, ""); len(msgs) != 0 {
				t.Errorf("the bridge's own imports: %q", msgs)
			}
			root := rootOf(g)
			trimmed := graphOf("+"+root+" "+trimmedPackage, trimmedPackage+" google.golang.org/grpc", "google.golang.org/grpc")
			if msgs := g.check(trimmed, trimmedPackage); len(msgs) != 0 {
				t.Errorf("through %s, which the workspace trims: %q", trimmedPackage, msgs)
			}
			if msgs := g.check(trimmed, ""); len(msgs) != 1 || !strings.Contains(msgs[0], "google.golang.org/grpc") {
				t.Errorf("as shipped, through %s: %q; want the gRPC ban", trimmedPackage, msgs)
			}
		})
	}
	t.Run("direct syscall/js", func(t *testing.T) {
		direct := graphOf("+crdplay/playground/kubectl syscall/js", "!syscall/js")
		for _, g := range guards {
			msgs := g.check(direct, "")
			if want := matches(g.pattern, "crdplay/playground/kubectl"); (len(msgs) == 1) != want {
				t.Errorf("%s: %q; want a message: %v", g.pattern, msgs, want)
			}
		}
	})
}

package kubectl

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// command is one kubectl command: what the emulation needs of cobra.Command. kubectl is built on cobra, and
// its parsing rules are reproduced here (flags anywhere, "--", persistent flags, required flags, unknown
// commands with suggestions) on top of pflag, which cobra itself uses; cobra's help and usage templates would
// link text/template's method tables into the wasm for output the playground does not show.
type command struct {
	// Use is the usage line; its first word is the command's name.
	Use   string
	Short string
	// SuggestFor are words that suggest this command when typed as an unknown command.
	SuggestFor []string
	// DisableFlagParsing hands every argument to RunE.
	DisableFlagParsing bool
	// RunE runs the command; nil for a command that only exists to be suggested.
	RunE func(cmd *command, args []string) error

	flags    *pflag.FlagSet
	required []string
	parent   *command
	hidden   bool
}

// Name is the first word of Use.
func (c *command) Name() string {
	name, _, _ := strings.Cut(c.Use, " ")
	return name
}

// Flags is the command's flag set.
func (c *command) Flags() *pflag.FlagSet {
	if c.flags == nil {
		c.flags = pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
		c.flags.SetOutput(discard{})
	}
	return c.flags
}

// CommandPath is "kubectl get" for get.
func (c *command) CommandPath() string {
	if c.parent != nil {
		return c.parent.CommandPath() + " " + c.Name()
	}
	return c.Name()
}

// MarkFlagRequired makes the command fail when the flag is not given.
func (c *command) MarkFlagRequired(name string) error {
	if c.Flags().Lookup(name) == nil {
		return fmt.Errorf("no such flag -%v", name)
	}
	c.required = append(c.required, name)
	return nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// tree is kubectl's root: its global flags and its commands in the order kubectl adds them.
type tree struct {
	root     *command
	global   *pflag.FlagSet
	commands []*command
	// before runs after the flags are parsed, before the command (cobra's PersistentPreRunE).
	before func()
}

func (t *tree) add(c *command) {
	c.parent = t.root
	t.commands = append(t.commands, c)
}

func (t *tree) find(name string) *command {
	for _, c := range t.commands {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// valueFlag reports whether a flag given as arg (without "=") takes the next argument as its value.
func valueFlag(arg string, fs *pflag.FlagSet) bool {
	if strings.HasPrefix(arg, "--") {
		f := fs.Lookup(arg[2:])
		return f == nil || f.NoOptDefVal == ""
	}
	if len(arg) == 2 {
		f := fs.ShorthandLookup(arg[1:])
		return f == nil || f.NoOptDefVal == ""
	}
	return false
}

// commandName is cobra's stripFlags: the first argument that is neither a flag nor a flag's value.
func commandName(args []string, fs *pflag.FlagSet) (string, int) {
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--":
			return "", -1
		case strings.HasPrefix(s, "-") && !strings.Contains(s, "=") && (strings.HasPrefix(s, "--") || len(s) == 2) && valueFlag(s, fs):
			i++
		case s != "" && !strings.HasPrefix(s, "-"):
			return s, i
		}
	}
	return "", -1
}

// run dispatches args as cobra does for kubectl: the command named by the first non-flag argument parses the
// rest with its flags and kubectl's global ones.
func (t *tree) run(args []string) error {
	name, pos := commandName(args, t.global)
	if name == "" {
		// Only flags: kubectl parses them and prints its help.
		fs := pflag.NewFlagSet("kubectl", pflag.ContinueOnError)
		fs.SetOutput(discard{})
		fs.AddFlagSet(t.global)
		fs.BoolP("help", "h", false, "help for kubectl")
		if err := fs.Parse(args); err != nil {
			return flagErrorFunc(t.root, err)
		}
		return t.root.RunE(t.root, nil)
	}
	c := t.find(name)
	if c == nil && name == "help" {
		// kubectl help [command]: the command's help.
		rest := append(append([]string{}, args[:pos]...), args[pos+1:]...)
		if n, _ := commandName(rest, t.global); n != "" {
			if hc := t.find(n); hc != nil {
				return &helpError{cmd: hc}
			}
			return fmt.Errorf("Unknown help topic %q\n", n)
		}
		return &helpError{cmd: t.root}
	}
	if c == nil || c.RunE == nil {
		return fmt.Errorf("unknown command %q for %q%s", name, t.root.Name(), t.suggestions(name))
	}
	c.parent = t.root
	rest := append(append([]string{}, args[:pos]...), args[pos+1:]...)
	if c.DisableFlagParsing {
		if t.before != nil {
			t.before()
		}
		return c.RunE(c, rest)
	}
	fs := c.Flags()
	fs.AddFlagSet(t.global)
	if fs.Lookup("help") == nil {
		fs.BoolP("help", "h", false, "help for "+c.Name())
	}
	if err := fs.Parse(rest); err != nil {
		return flagErrorFunc(c, err)
	}
	if help, _ := fs.GetBool("help"); help {
		return &helpError{cmd: c}
	}
	var missing []string
	for _, r := range c.required {
		if f := fs.Lookup(r); f != nil && !f.Changed {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf(`required flag(s) "%s" not set`, strings.Join(missing, `", "`))
	}
	if t.before != nil {
		t.before()
	}
	return c.RunE(c, fs.Args())
}

// suggestions is cobra's "Did you mean this?": commands within two edits of the typo (ignoring case), those
// it is a prefix of, and those that list it in SuggestFor, in kubectl's order.
func (t *tree) suggestions(typed string) string {
	var out []string
	for _, c := range t.commands {
		if c.RunE == nil || c.hidden {
			continue
		}
		if levenshtein(strings.ToLower(typed), strings.ToLower(c.Name())) <= 2 || strings.HasPrefix(strings.ToLower(c.Name()), strings.ToLower(typed)) {
			out = append(out, c.Name())
		}
		for _, s := range c.SuggestFor {
			if strings.EqualFold(typed, s) {
				out = append(out, c.Name())
			}
		}
	}
	if len(out) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nDid you mean this?\n")
	for _, s := range out {
		fmt.Fprintf(&b, "\t%v\n", s)
	}
	return b.String()
}

func levenshtein(a, b string) int {
	d := make([]int, len(b)+1)
	for j := range d {
		d[j] = j
	}
	for i := 1; i <= len(a); i++ {
		prev := d[0]
		d[0] = i
		for j := 1; j <= len(b); j++ {
			cur := d[j]
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[j] = min(d[j]+1, d[j-1]+1, prev+cost)
			prev = cur
		}
	}
	return d[len(b)]
}

// helpError asks for a command's help, which is not an error: kubectl prints it and exits 0.
type helpError struct{ cmd *command }

func (e *helpError) Error() string { return "help for " + e.cmd.CommandPath() }

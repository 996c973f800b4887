package kubectl

import (
	"bytes"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

type describeOptions struct {
	selectorFlags
	files      fileOptions
	showEvents bool
	chunkSize  int64
}

func (k *kubectl) newDescribeCommand() *command {
	o := &describeOptions{showEvents: true, chunkSize: 500}
	cmd := &command{
		Use:        "describe (-f FILENAME | TYPE [NAME_PREFIX | -l label] | TYPE/NAME)",
		Short:      "Show details of a specific resource or group of resources",
		SuggestFor: []string{"inspect"},
		RunE:       func(cmd *command, args []string) error { return k.runDescribe(cmd, o, args) },
	}
	addFileFlags(cmd, &o.files, "containing the resource to describe")
	addLabelSelectorFlag(cmd, &o.labelSelector)
	addAllNamespacesFlag(cmd, &o.allNamespaces)
	cmd.Flags().BoolVar(&o.showEvents, "show-events", true, "If true, display events related to the described object.")
	addChunkSizeFlag(cmd, &o.chunkSize)
	return cmd
}

// runDescribe is DescribeOptions.Run: describe every object the builder finds, or, when TYPE NAME names
// none, those whose name starts with NAME.
func (k *kubectl) runDescribe(cmd *command, o *describeOptions, args []string) error {
	if len(args) == 0 && len(o.files.filenames) == 0 && o.files.kustomize == "" {
		return fmt.Errorf("You must specify the type of resource to describe. %s\n", suggestAPIResources)
	}
	if o.allNamespaces {
		k.explicitNamespace = false
	}
	b, err := k.newBuilder(args, o.files, builderOptions{selectorFlags: o.selectorFlags, allowEmptySelector: true, chunkSize: o.chunkSize})
	if err != nil {
		return err
	}
	// Objects read from files are not fetched by the builder; the describer fetches every object anyway.
	infos, errs := b.infos(fetchLazy)
	// kubectl shows events only when it describes a single object, unless asked.
	if (len(errs) > 0 || len(infos) > 1) && !cmd.Flags().Changed("show-events") {
		o.showEvents = false
	}
	if len(errs) == 1 && apierrors.IsNotFound(errs[0]) && len(args) == 2 {
		return k.describeMatching(utilerrors.NewAggregate(errs), args[0], args[1], o)
	}
	errs = k.describeAll(infos, o, errs)
	if len(infos) == 0 && len(errs) == 0 {
		k.noResourcesFound(!o.allNamespaces)
	}
	return utilerrors.NewAggregate(errs)
}

// describeAll prints the description of each object, a blank line between two; it adds the errors of the
// describer (each different one once) to errs.
func (k *kubectl) describeAll(infos []*info, o *describeOptions, errs []error) []error {
	seen := map[string]bool{}
	first := true
	for _, it := range infos {
		s, err := k.describeGeneric(it, o)
		if err != nil {
			if !seen[err.Error()] {
				seen[err.Error()] = true
				errs = append(errs, err)
			}
			continue
		}
		if first {
			first = false
			k.out.WriteString(s)
		} else {
			fmt.Fprintf(&k.out, "\n\n%s", s)
		}
	}
	return errs
}

// describeMatching is DescribeMatchingResources: `describe TYPE PREFIX` describes every object whose name
// starts with PREFIX when no object has that exact name.
func (k *kubectl) describeMatching(original error, resource, prefix string, o *describeOptions) error {
	sel, err := k.selectArgs([]string{resource}, builderOptions{allowEmptySelector: true})
	if err != nil {
		return err
	}
	if len(sel.lists) != 1 {
		return fmt.Errorf("you must provide one resource type")
	}
	infos, errs := k.listInfos(sel.lists[0], builderOptions{chunkSize: o.chunkSize})
	if len(errs) > 0 {
		return errs[0]
	}
	found := false
	for _, it := range infos {
		if !strings.HasPrefix(it.name, prefix) {
			continue
		}
		found = true
		s, err := k.describeGeneric(it, o)
		if err != nil {
			return err
		}
		fmt.Fprintf(&k.out, "%s\n", s)
	}
	if !found {
		return original
	}
	return nil
}

// describeGeneric is kubectl's generic describer, used for custom resources and CRDs: the object fetched
// again, its fields as indented "Smart Label:  value" lines, and the events that name it.
func (k *kubectl) describeGeneric(it *info, o *describeOptions) (string, error) {
	obj, err := k.get(it.mapping, it.namespace, it.name, "")
	if err != nil {
		return "", err
	}
	eventsFound := false
	if o.showEvents {
		eventsFound = k.searchEvents(obj, o.chunkSize)
	}
	var buf bytes.Buffer
	tw := new(tabwriter.Writer)
	tw.Init(&buf, 0, 8, 2, ' ', 0)
	w := &prefixWriter{w: tw}
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.write(0, "Namespace:\t%s\n", obj.GetNamespace())
	printLabelsMultiline(w, "Labels", obj.GetLabels())
	printAnnotationsMultiline(w, "Annotations", obj.GetAnnotations())
	printUnstructuredContent(w, 0, obj.Object, "", ".metadata.managedFields", ".metadata.name",
		".metadata.namespace", ".metadata.labels", ".metadata.annotations")
	if eventsFound {
		// The playground's API server has no events; an empty list is what kubectl shows then.
		w.write(0, "Events:\t<none>\n")
	}
	_ = tw.Flush()
	return buf.String(), nil
}

// searchEvents asks for the events about an object, as kubectl describe does. The answer counts only as far
// as kubectl's describer reads it: an error still prints "Events: <none>".
func (k *kubectl) searchEvents(obj *unstructured.Unstructured, limit int64) bool {
	fs := fmt.Sprintf("involvedObject.name=%s,involvedObject.namespace=%s,involvedObject.kind=%s,involvedObject.uid=%s",
		obj.GetName(), obj.GetNamespace(), obj.GetKind(), obj.GetUID())
	q := url.Values{}
	q.Set("fieldSelector", fs)
	if limit > 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	p := "/api/v1/events"
	if obj.GetNamespace() != "" {
		p = "/api/v1/namespaces/" + obj.GetNamespace() + "/events"
	}
	_, _ = k.client.call(request{method: "GET", path: p, query: q, accept: acceptAny})
	return true
}

// prefixWriter is describe's PrefixWriter: two spaces per level, terminal escapes made visible.
type prefixWriter struct{ w *tabwriter.Writer }

func (pw *prefixWriter) write(level int, format string, a ...interface{}) {
	prefix := strings.Repeat("  ", level)
	writeEscaped(pw.w, fmt.Sprintf(prefix+format, a...))
}

func (pw *prefixWriter) writeLine(a ...interface{}) {
	writeEscaped(pw.w, fmt.Sprintln(a...))
}

func writeEscaped(w *tabwriter.Writer, s string) {
	_, _ = w.Write([]byte(escapeTerminal(s)))
}

func printLabelsMultiline(w *prefixWriter, title string, labels map[string]string) {
	w.write(0, "%s:%s", title, "\t")
	if len(labels) == 0 {
		w.writeLine("<none>")
		return
	}
	for i, key := range slices.Sorted(maps.Keys(labels)) {
		if i != 0 {
			w.write(0, "%s", "")
			w.write(0, "%s", "\t")
		}
		w.write(0, "%s=%s\n", key, labels[key])
	}
}

const maxAnnotationLen = 140

func printAnnotationsMultiline(w *prefixWriter, title string, annotations map[string]string) {
	w.write(0, "%s:\t", title)
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		if k == lastAppliedAnnotation {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		w.writeLine("<none>")
		return
	}
	slices.Sort(keys)
	indent := "\t"
	for i, key := range keys {
		if i != 0 {
			w.write(0, indent)
		}
		value := strings.TrimSuffix(annotations[key], "\n")
		if (len(value)+len(key)+2) > maxAnnotationLen || strings.Contains(value, "\n") {
			w.write(0, "%s:\n", key)
			for _, s := range strings.Split(value, "\n") {
				w.write(0, "%s  %s\n", indent, shorten(s, maxAnnotationLen-2))
			}
		} else {
			w.write(0, "%s: %s\n", key, value)
		}
	}
}

func shorten(s string, max int) string {
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

func printUnstructuredContent(w *prefixWriter, level int, content map[string]interface{}, skipPrefix string, skip ...string) {
	for _, field := range slices.Sorted(maps.Keys(content)) {
		value := content[field]
		skipExpr := skipPrefix + "." + field
		if slices.Contains(skip, skipExpr) {
			continue
		}
		switch v := value.(type) {
		case map[string]interface{}:
			w.write(level, "%s:\n", smartLabelFor(field))
			printUnstructuredContent(w, level+1, v, skipExpr, skip...)
		case []interface{}:
			w.write(level, "%s:\n", smartLabelFor(field))
			for _, child := range v {
				switch c := child.(type) {
				case map[string]interface{}:
					printUnstructuredContent(w, level+1, c, skipExpr, skip...)
				default:
					w.write(level+1, "%v\n", c)
				}
			}
		default:
			w.write(level, "%s:\t%v\n", smartLabelFor(field), v)
		}
	}
}

// smartLabelFor turns a field name into describe's label: "cronSpec" becomes "Cron Spec", "apiVersion"
// "API Version".
func smartLabelFor(field string) string {
	if strings.IndexFunc(field, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) != -1 {
		return field
	}
	acronyms := []string{"API", "URL", "UID", "GUID"}
	parts := camelcaseSplit(field)
	merged := make([]string, 0, len(parts))
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		if i < len(parts)-1 {
			next := parts[i+1]
			allUpper := true
			for _, r := range part {
				if unicode.IsLetter(r) && !unicode.IsUpper(r) {
					allUpper = false
					break
				}
			}
			if len(part) >= 2 && allUpper && len(next) > 0 && unicode.IsUpper(rune(next[0])) {
				merged = append(merged, part+next)
				i++
				continue
			}
		}
		merged = append(merged, part)
	}
	result := make([]string, 0, len(merged))
	for _, part := range merged {
		if part == "_" {
			continue
		}
		isAcronym := false
		for _, a := range acronyms {
			if a == strings.ToUpper(part) {
				isAcronym = true
			}
		}
		if isAcronym {
			part = strings.ToUpper(part)
		} else if strings.ToLower(part) == part {
			part = titleWord(part)
		}
		result = append(result, part)
	}
	return strings.Join(result, " ")
}

// titleWord upper-cases the first letter of a lower-case word (cases.Title for the words field names have).
func titleWord(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToTitle(r)) + s[size:]
}

// camelcaseSplit is github.com/fatih/camelcase.Split: runs of lower case, upper case, digits and other
// characters, with the last capital of an upper-case run moved to the lower-case run after it.
func camelcaseSplit(src string) []string {
	if !utf8.ValidString(src) {
		return []string{src}
	}
	var runes [][]rune
	lastClass := 0
	for _, r := range src {
		class := 4
		switch {
		case unicode.IsLower(r):
			class = 1
		case unicode.IsUpper(r):
			class = 2
		case unicode.IsDigit(r):
			class = 3
		}
		if class == lastClass {
			runes[len(runes)-1] = append(runes[len(runes)-1], r)
		} else {
			runes = append(runes, []rune{r})
		}
		lastClass = class
	}
	for i := 0; i < len(runes)-1; i++ {
		if unicode.IsUpper(runes[i][0]) && unicode.IsLower(runes[i+1][0]) {
			runes[i+1] = append([]rune{runes[i][len(runes[i])-1]}, runes[i+1]...)
			runes[i] = runes[i][:len(runes[i])-1]
		}
	}
	out := []string{}
	for _, s := range runes {
		if len(s) > 0 {
			out = append(out, string(s))
		}
	}
	return out
}

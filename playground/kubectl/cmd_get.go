package kubectl

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

type getOptions struct {
	printFlags
	selectorFlags
	showLabels        bool
	showKind          bool
	labelColumns      []string
	sortBy            string
	noHeaders         bool
	raw               string
	watch, watchOnly  bool
	outputWatchEvents bool
	ignoreNotFound    bool
	serverPrint       bool
	chunkSize         int64
	subresource       string
	files             fileOptions
}

func (k *kubectl) newGetCommand() *command {
	o := &getOptions{serverPrint: true, chunkSize: 500}
	cmd := &command{
		Use:        "get [(-o|--output=)json|yaml|name|go-template|go-template-file|template|templatefile|jsonpath|jsonpath-as-json|jsonpath-file|custom-columns|custom-columns-file|wide] (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ...) [flags]",
		Short:      "Display one or many resources",
		SuggestFor: []string{"list", "ls"},
		RunE:       func(cmd *command, args []string) error { return k.runGet(cmd, o, args) },
	}
	addPrintFlags(cmd, &o.printFlags)
	f := cmd.Flags()
	f.BoolVar(&o.noHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers (default print headers).")
	f.BoolVar(&o.showLabels, "show-labels", false, "When printing, show all labels as the last column (default hide labels column)")
	f.StringVar(&o.sortBy, "sort-by", "", "If non-empty, sort list types using this field specification.")
	f.StringSliceVarP(&o.labelColumns, "label-columns", "L", nil, "Accepts a comma separated list of labels that are going to be presented as columns.")
	f.BoolVar(&o.showKind, "show-kind", false, "If present, list the resource type for the requested object(s).")
	f.StringVar(&o.raw, "raw", "", "Raw URI to request from the server.")
	f.BoolVarP(&o.watch, "watch", "w", false, "After listing/getting the requested object, watch for changes.")
	f.BoolVar(&o.watchOnly, "watch-only", false, "Watch for changes to the requested object(s), without listing/getting first.")
	f.BoolVar(&o.outputWatchEvents, "output-watch-events", false, "Output watch event objects when --watch or --watch-only is used.")
	f.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "If set to true, suppresses NotFound error for specific objects that do not exist.")
	addFieldSelectorFlag(cmd, &o.fieldSelector)
	addAllNamespacesFlag(cmd, &o.allNamespaces)
	f.BoolVar(&o.serverPrint, "server-print", true, "If true, have the server return the appropriate table output.")
	addFileFlags(cmd, &o.files, "identifying the resource to get from a server.")
	addChunkSizeFlag(cmd, &o.chunkSize)
	addLabelSelectorFlag(cmd, &o.labelSelector)
	f.StringVar(&o.subresource, "subresource", "", "If specified, gets the subresource of the requested object.")
	return cmd
}

const suggestAPIResources = `Use "kubectl api-resources" for a complete list of supported resources.`

// runGet is GetOptions.Complete, Validate and Run: the builder fetches what the arguments name, as Tables
// when get prints them, then the objects are printed as tables or by the -o printer.
func (k *kubectl) runGet(cmd *command, o *getOptions, args []string) error {
	if err := k.completeGet(cmd, o, args); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	if o.raw != "" {
		return k.rawGet(o.raw)
	}
	if o.watch || o.watchOnly {
		return &notSupportedError{what: "watching (-w/--watch)"}
	}
	if o.sortBy != "" {
		return &notSupportedError{what: "--sort-by"}
	}
	b, err := k.newBuilder(args, o.files, builderOptions{selectorFlags: o.selectorFlags, allowEmptySelector: true, chunkSize: o.chunkSize})
	if err != nil {
		return err
	}
	if len(b.lists) > 0 && o.subresource != "" {
		return fmt.Errorf("subresource cannot be used when bulk resources are specified")
	}
	results, errs := b.bodies(o.accept(), o.subresource)
	if o.ignoreNotFound {
		errs = withoutNotFound(errs)
	}
	if !o.humanReadable() {
		return k.printGeneric(o, results, errs, b.singleItemImplied)
	}
	return k.printTables(o, results, errs)
}

// completeGet is GetOptions.Complete: -A drops the namespace -n gave, -o json|yaml asks for objects rather
// than tables, and a command line without resources is a usage error.
func (k *kubectl) completeGet(cmd *command, o *getOptions, args []string) error {
	if o.raw != "" {
		if len(args) > 0 {
			return fmt.Errorf("arguments may not be passed when --raw is specified")
		}
		return nil
	}
	if o.allNamespaces {
		k.explicitNamespace = false
	}
	if strings.Contains(o.output, "custom-columns") || o.output == "yaml" || strings.Contains(o.output, "json") {
		o.serverPrint = false
	}
	if !o.watch && !o.watchOnly && len(args) == 0 && len(o.files.filenames) == 0 && o.files.kustomize == "" {
		fmt.Fprintf(&k.errOut, "You must specify the type of resource to get. %s\n\n", suggestAPIResources)
		return usageErrorf(cmd, "%s", "Required resource not specified.\nUse \"kubectl explain <resource>\" for a detailed description of that resource (e.g. kubectl explain pods).")
	}
	return nil
}

// validate is GetOptions.Validate.
func (o *getOptions) validate() error {
	if o.raw != "" {
		if o.watch || o.watchOnly || o.labelSelector != "" {
			return fmt.Errorf("--raw may not be specified with other flags that filter the server request or alter the output")
		}
		if o.output != "" {
			return fmt.Errorf("--raw and --output are mutually exclusive")
		}
		if _, err := url.ParseRequestURI(o.raw); err != nil {
			return fmt.Errorf("--raw must be a valid URL path: %v", err)
		}
	}
	if o.showLabels && o.output != "" && o.output != "wide" {
		return fmt.Errorf("--show-labels option cannot be used with %s printer", o.output)
	}
	if o.outputWatchEvents && !(o.watch || o.watchOnly) {
		return fmt.Errorf("--output-watch-events option can only be used with --watch or --watch-only")
	}
	return nil
}

// humanReadable: get prints tables, not objects.
func (o *getOptions) humanReadable() bool {
	return (o.output == "" && o.template == "") || o.output == "wide"
}

// accept is the Accept header of get's requests: Tables when get prints them from the server's columns.
func (o *getOptions) accept() string {
	if o.serverPrint && o.humanReadable() {
		return acceptTable
	}
	return acceptJSON
}

// rawGet is kubectl get --raw: the response body as it is.
func (k *kubectl) rawGet(raw string) error {
	u, _ := url.Parse(raw)
	body, err := k.client.call(request{method: "GET", path: u.Path, query: u.Query(), accept: acceptAny})
	if err != nil {
		return err
	}
	k.out.Write(body)
	return nil
}

// printTables prints get's human-readable output: one table per resource type, a blank line between types,
// and "No resources found" when nothing was printed.
func (k *kubectl) printTables(o *getOptions, results []fetchedBody, errs []error) error {
	if err := checkFormat(o.output, getAllowedFormats); err != nil && len(results) > 0 {
		errs = append(errs, err)
		return utilerrors.NewAggregate(errs)
	}
	withKind := o.showKind || mixedKinds(results)
	w := &typeTables{out: &k.out}
	var (
		lastMapping *mapping
		printer     *tablePrinter
		fallback    *metaPrinter
	)
	for _, r := range results {
		m := r.mapping
		if printer == nil || lastMapping == nil || m.gvr != lastMapping.gvr {
			w.endType(lastMapping != nil && !o.noHeaders)
			printer = &tablePrinter{opts: o.printOptions(m, withKind)}
			fallback = &metaPrinter{opts: printer.opts}
			lastMapping = m
		}
		if t, ok := decodeTable(r.body); ok {
			printer.printTable(t, &w.block)
			continue
		}
		// The server did not answer with a Table: kubectl prints NAME and AGE from the object's metadata.
		u, err := decodeObject(r.body)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fallback.print(u, &w.block)
	}
	w.flush()
	if w.written == 0 && !o.ignoreNotFound && len(errs) == 0 {
		k.noResourcesFound(!o.allNamespaces && allNamespaced(results))
	}
	return utilerrors.NewAggregate(errs)
}

// printOptions are the table printer's options for the resource type m.
func (o *getOptions) printOptions(m *mapping, withKind bool) printOptions {
	return printOptions{
		noHeaders:     o.noHeaders,
		wide:          o.output == "wide",
		withNamespace: o.allNamespaces && m.namespaced,
		withKind:      withKind,
		kind:          m.gvk.GroupKind(),
		showLabels:    o.showLabels,
		columnLabels:  o.labelColumns,
	}
}

// mixedKinds reports whether the results are of more than one kind: kubectl then prefixes names with it.
func mixedKinds(results []fetchedBody) bool {
	for _, r := range results {
		if r.mapping.gvk != results[0].mapping.gvk {
			return true
		}
	}
	return false
}

// allNamespaced reports whether every result's type is namespaced, so that "No resources found" names the
// namespace.
func allNamespaced(results []fetchedBody) bool {
	for _, r := range results {
		if !r.mapping.namespaced {
			return false
		}
	}
	return true
}

// typeTables is where get's tables meet: each resource type's rows go through their own tab writer, and a
// blank line separates a type's table from the one before.
type typeTables struct {
	out *stream
	// block holds the current type's rows, not yet aligned.
	block bytes.Buffer
	// written counts what was printed, the blank lines included.
	written int
	// separate: the next table printed starts with a blank line.
	separate bool
}

// endType prints the current type's table; separate says whether a table that follows is set apart by a
// blank line (kubectl's printers do it when headers are printed).
func (w *typeTables) endType(separate bool) {
	w.flush()
	if separate && w.written > 0 {
		w.separate = true
	}
}

// flush aligns and prints the rows so far.
func (w *typeTables) flush() {
	if w.block.Len() == 0 {
		return
	}
	var out bytes.Buffer
	tw := newTabWriter(&out)
	_, _ = tw.Write(w.block.Bytes())
	_ = tw.Flush()
	w.block.Reset()
	if out.Len() == 0 {
		return
	}
	if w.separate {
		w.out.WriteString("\n")
		w.written++
		w.separate = false
	}
	w.written += out.Len()
	w.out.Write(out.Bytes())
}

// printGeneric prints -o json|yaml|name: one object alone when one was named, otherwise a v1 List.
func (k *kubectl) printGeneric(o *getOptions, results []fetchedBody, errs []error, singleItemImplied bool) error {
	items, errs := flattenBodies(results, errs)
	if len(errs) > 0 && singleItemImplied {
		return utilerrors.NewAggregate(errs)
	}
	if len(items) == 0 && o.ignoreNotFound {
		return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
	}
	if err := checkFormat(o.output, getAllowedFormats); err != nil {
		return err
	}
	if singleItemImplied && len(items) == 1 {
		p := &outputPrinter{format: o.output, showManagedFields: o.showManagedFields}
		if err := p.print(&k.out, items[0]); err != nil {
			errs = append(errs, err)
		}
		return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
	}
	switch strings.ToLower(o.output) {
	case "json", "yaml":
		if err := printList(&k.out, o.output, items, o.showManagedFields); err != nil {
			errs = append(errs, err)
		}
	case "name":
		for _, it := range items {
			printName(&k.out, objectGroupKind(it), it.GetName(), "", true)
		}
	}
	return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
}

// flattenBodies decodes the bodies into objects, the items of lists one by one (with the kind the list
// implies when an item has none); errors of bodies that do not decode are added to errs.
func flattenBodies(results []fetchedBody, errs []error) ([]*unstructured.Unstructured, []error) {
	var items []*unstructured.Unstructured
	for _, r := range results {
		u, err := decodeObject(r.body)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		list, ok := u.Object["items"].([]interface{})
		if !ok || !u.IsList() {
			items = append(items, u)
			continue
		}
		for _, it := range list {
			if m, ok := it.(map[string]interface{}); ok {
				item := &unstructured.Unstructured{Object: m}
				if item.GetKind() == "" && item.GetAPIVersion() == "" {
					item.SetKind(strings.TrimSuffix(u.GetKind(), "List"))
					item.SetAPIVersion(u.GetAPIVersion())
				}
				items = append(items, item)
			}
		}
	}
	return items, errs
}

// metaPrinter is the printer kubectl falls back to for objects the server did not turn into a Table:
// NAME and AGE from metadata.
type metaPrinter struct {
	opts          printOptions
	printedHeader bool
}

func (p *metaPrinter) print(u *unstructured.Unstructured, w *bytes.Buffer) {
	var rows []*unstructured.Unstructured
	if items, ok := u.Object["items"].([]interface{}); ok && u.IsList() {
		for _, it := range items {
			if m, ok := it.(map[string]interface{}); ok {
				rows = append(rows, &unstructured.Unstructured{Object: m})
			}
		}
	} else {
		rows = append(rows, u)
	}
	if !p.printedHeader && !p.opts.noHeaders {
		headers := []string{"NAME", "AGE"}
		headers = append(headers, formatLabelHeaders(p.opts.columnLabels)...)
		if p.opts.showLabels {
			headers = append(headers, "LABELS")
		}
		if p.opts.withNamespace {
			headers = append([]string{"NAMESPACE"}, headers...)
		}
		fmt.Fprintf(w, "%s\n", strings.Join(headers, "\t"))
	}
	p.printedHeader = true
	for _, r := range rows {
		if p.opts.withNamespace {
			fmt.Fprintf(w, "%s\t", r.GetNamespace())
		}
		name := r.GetName()
		if p.opts.withKind && p.opts.kind.Kind != "" {
			name = strings.ToLower(groupKindString(p.opts.kind)) + "/" + name
		}
		fmt.Fprintf(w, "%s\t%s", name, translateTimestampSince(r.GetCreationTimestamp()))
		for _, key := range p.opts.columnLabels {
			fmt.Fprintf(w, "\t%s", r.GetLabels()[key])
		}
		if p.opts.showLabels {
			fmt.Fprintf(w, "\t%s", labels.FormatLabels(r.GetLabels()))
		}
		w.WriteString("\n")
	}
}

func translateTimestampSince(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}

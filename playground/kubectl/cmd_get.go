package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

type getOptions struct {
	output            string
	template          string
	showLabels        bool
	showKind          bool
	labelColumns      []string
	sortBy            string
	noHeaders         bool
	showManagedFields bool
	raw               string
	watch, watchOnly  bool
	outputWatchEvents bool
	ignoreNotFound    bool
	fieldSelector     string
	labelSelector     string
	allNamespaces     bool
	serverPrint       bool
	chunkSize         int64
	subresource       string
	files             fileOptions
}

func addFileFlags(cmd *command, fo *fileOptions, usage string) {
	cmd.Flags().StringSliceVarP(&fo.filenames, "filename", "f", nil, "Filename, directory, or URL to files "+usage)
	cmd.Flags().StringVarP(&fo.kustomize, "kustomize", "k", "", "Process the kustomization directory. This flag can't be used together with -f or -R.")
	cmd.Flags().BoolVarP(&fo.recursive, "recursive", "R", false, "Process the directory used in -f, --filename recursively. Useful when you want to manage related manifests organized within the same directory.")
}

// checkFileOptions rejects what the playground's file map cannot serve.
func checkFileOptions(fo fileOptions) error {
	if fo.kustomize != "" {
		return &notSupportedError{what: "-k/--kustomize"}
	}
	for _, f := range fo.filenames {
		if f == "-" {
			return &notSupportedError{what: "reading from stdin (-f -)"}
		}
	}
	return nil
}

// addTemplateFlags registers the go-template/jsonpath flags every printing command has.
func addTemplateFlags(cmd *command, template *string) {
	cmd.Flags().StringVar(template, "template", "", "Template string or path to template file to use when -o=go-template, -o=go-template-file.")
	cmd.Flags().Bool("allow-missing-template-keys", true, "If true, ignore any errors in templates when a field or map key is missing in the template.")
}

func (k *kubectl) newGetCommand() *command {
	o := &getOptions{serverPrint: true, chunkSize: 500}
	cmd := &command{
		Use:                   "get [(-o|--output=)json|yaml|name|go-template|go-template-file|template|templatefile|jsonpath|jsonpath-as-json|jsonpath-file|custom-columns|custom-columns-file|wide] (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ...) [flags]",
		DisableFlagsInUseLine: true,
		Short:                 "Display one or many resources",
		SuggestFor:            []string{"list", "ls"},
		RunE: func(cmd *command, args []string) error {
			return k.runGet(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "Output format.")
	addTemplateFlags(cmd, &o.template)
	f.BoolVar(&o.showManagedFields, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
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
	f.StringVar(&o.fieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	f.BoolVar(&o.serverPrint, "server-print", true, "If true, have the server return the appropriate table output.")
	addFileFlags(cmd, &o.files, "identifying the resource to get from a server.")
	f.Int64Var(&o.chunkSize, "chunk-size", 500, "Return large lists in chunks rather than all at once. Pass 0 to disable.")
	f.StringVarP(&o.labelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	f.StringVar(&o.subresource, "subresource", "", "If specified, gets the subresource of the requested object.")
	return cmd
}

// getResult is one thing the builder produced for get: an object, a list page or a table, with its mapping.
type getResult struct {
	mapping *mapping
	body    []byte // the response: a Table, an object or a list
}

func (k *kubectl) runGet(cmd *command, o *getOptions, args []string) error {
	// Complete.
	if o.raw != "" {
		if len(args) > 0 {
			return fmt.Errorf("arguments may not be passed when --raw is specified")
		}
	} else {
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
	}
	humanReadable := (o.output == "" && o.template == "") || o.output == "wide"
	// Validate.
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
	if o.raw != "" {
		return k.rawGet(o.raw)
	}
	if o.watch || o.watchOnly {
		return &notSupportedError{what: "watching (-w/--watch)"}
	}
	if o.sortBy != "" {
		return &notSupportedError{what: "--sort-by"}
	}
	if err := checkFileOptions(o.files); err != nil {
		return err
	}

	bo := builderOptions{
		namespace:          k.namespace,
		allNamespaces:      o.allNamespaces,
		labelSelector:      o.labelSelector,
		fieldSelector:      o.fieldSelector,
		allowEmptySelector: true,
	}
	accept := acceptJSON
	if o.serverPrint && humanReadable {
		accept = acceptTable
	}

	var results []getResult
	var errs []error
	singleItemImplied := false
	if len(o.files.filenames) > 0 {
		if len(args) > 0 {
			return fmt.Errorf("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")
		}
		infos, ferrs := k.readFiles(o.files, k.namespace, k.explicitNamespace, nil)
		errs = append(errs, ferrs...)
		infos, err := filterByLabels(infos, o.labelSelector)
		if err != nil {
			return err
		}
		singleItemImplied = len(o.files.filenames) == 1
		for _, it := range infos {
			body, err := k.getAs(it.mapping, it.namespace, it.name, o.subresource, accept)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			results = append(results, getResult{mapping: it.mapping, body: body})
		}
	} else {
		sel, err := k.selectArgs(args, bo)
		if err != nil {
			return err
		}
		singleItemImplied = sel.singleItemImplied
		if len(sel.lists) > 0 && o.subresource != "" {
			return fmt.Errorf("subresource cannot be used when bulk resources are specified")
		}
		for _, m := range sel.lists {
			pages, err := k.list(m, k.namespace, bo, o.chunkSize, accept, nil)
			for _, p := range pages {
				results = append(results, getResult{mapping: m, body: p})
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		for _, it := range sel.items {
			body, err := k.getAs(it.mapping, it.namespace, it.name, o.subresource, accept)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			results = append(results, getResult{mapping: it.mapping, body: body})
		}
	}
	if o.ignoreNotFound {
		var kept []error
		for _, e := range errs {
			if !apierrors.IsNotFound(e) {
				kept = append(kept, e)
			}
		}
		errs = kept
	}

	if !humanReadable {
		return k.printGeneric(o, results, errs, singleItemImplied)
	}

	// Human-readable: one table per resource type, a blank line between types.
	if err := checkFormat(o.output, getAllowedFormats); err != nil && len(results) > 0 {
		errs = append(errs, err)
		return utilerrors.NewAggregate(errs)
	}
	printWithKind := o.showKind
	if len(results) >= 2 {
		for _, r := range results[1:] {
			if r.mapping.gvk != results[0].mapping.gvk {
				printWithKind = true
			}
		}
	}
	allNamespaced := !o.allNamespaces
	written := 0
	var (
		lastMapping *mapping
		printer     *tablePrinter
		fallback    *metaPrinter
		block       bytes.Buffer
		ready       bool
	)
	flush := func() {
		if block.Len() == 0 {
			return
		}
		var out bytes.Buffer
		tw := newTabWriter(&out)
		_, _ = tw.Write(block.Bytes())
		_ = tw.Flush()
		block.Reset()
		if out.Len() == 0 {
			return
		}
		if ready {
			k.out.WriteString("\n")
			written++
			ready = false
		}
		written += out.Len()
		k.out.Write(out.Bytes())
	}
	for _, r := range results {
		m := r.mapping
		allNamespaced = allNamespaced && m.namespaced
		if printer == nil || lastMapping == nil || m.gvr != lastMapping.gvr {
			flush()
			if lastMapping != nil && !o.noHeaders && written > 0 {
				ready = true
			}
			printer = &tablePrinter{opts: printOptions{
				noHeaders:     o.noHeaders,
				wide:          o.output == "wide",
				withNamespace: o.allNamespaces && m.namespaced,
				withKind:      printWithKind,
				kind:          m.gvk.GroupKind(),
				showLabels:    o.showLabels,
				columnLabels:  o.labelColumns,
			}}
			fallback = &metaPrinter{opts: printer.opts}
			lastMapping = m
		}
		if t, ok := decodeTable(r.body); ok {
			printer.printTable(t, &block)
			continue
		}
		// The server did not answer with a Table: kubectl prints NAME and AGE from the object's metadata.
		u, err := decodeObject(r.body)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fallback.print(u, &block)
	}
	flush()
	if written == 0 && !o.ignoreNotFound && len(errs) == 0 {
		if allNamespaced {
			fmt.Fprintf(&k.errOut, "No resources found in %s namespace.\n", k.namespace)
		} else {
			fmt.Fprintln(&k.errOut, "No resources found")
		}
	}
	return utilerrors.NewAggregate(errs)
}

const suggestAPIResources = `Use "kubectl api-resources" for a complete list of supported resources.`

// getAs fetches one object with the given Accept header, as resource.Info.Get does: when the object is not
// found in a namespace other than default, kubectl asks for the namespace, and reports a missing namespace
// rather than a missing object.
func (k *kubectl) getAs(m *mapping, namespace, name, subresource, accept string) ([]byte, error) {
	p := m.path(namespace, name)
	if subresource != "" {
		p += "/" + subresource
	}
	body, err := k.client.call(request{method: "GET", path: p, accept: accept, resource: m.gvr.GroupResource(), name: name})
	if err != nil && apierrors.IsNotFound(err) && namespace != "" && namespace != "default" {
		_, nsErr := k.client.call(request{method: "GET", path: "/api/v1/namespaces/" + namespace, accept: acceptJSON,
			resource: schema.GroupResource{Resource: "namespaces"}, name: namespace})
		if nsErr != nil && apierrors.IsNotFound(nsErr) {
			return nil, nsErr
		}
	}
	return body, err
}

// fetch is resource.Info.Get: the object, with the namespace check of getAs.
func (k *kubectl) fetch(m *mapping, namespace, name, subresource string) (*unstructured.Unstructured, error) {
	body, err := k.getAs(m, namespace, name, subresource, acceptJSON)
	if err != nil {
		return nil, err
	}
	return decodeObject(body)
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

// printGeneric prints -o json|yaml|name: one object alone when one was named, otherwise a v1 List.
func (k *kubectl) printGeneric(o *getOptions, results []getResult, errs []error, singleItemImplied bool) error {
	var items []*unstructured.Unstructured
	for _, r := range results {
		u, err := decodeObject(r.body)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if list, ok := u.Object["items"].([]interface{}); ok && u.IsList() {
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
			continue
		}
		items = append(items, u)
	}
	if len(errs) > 0 && singleItemImplied {
		return utilerrors.NewAggregate(errs)
	}
	if len(items) == 0 && o.ignoreNotFound {
		return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
	}
	if err := checkFormat(o.output, getAllowedFormats); err != nil {
		return err
	}
	p := &outputPrinter{format: o.output, showManagedFields: o.showManagedFields}
	if singleItemImplied && len(items) == 1 {
		if err := p.print(&k.out, items[0]); err != nil {
			errs = append(errs, err)
		}
		return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
	}
	listItems := make([]interface{}, 0, len(items))
	for _, it := range items {
		obj := it.Object
		if !o.showManagedFields && o.output != "name" {
			obj = omitManagedFields(obj)
		}
		listItems = append(listItems, obj)
	}
	list := map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]interface{}{"resourceVersion": ""},
		"items":      listItems,
	}
	switch strings.ToLower(o.output) {
	case "json":
		if err := printJSON(&k.out, list); err != nil {
			errs = append(errs, err)
		}
	case "yaml":
		if err := printYAML(&k.out, list); err != nil {
			errs = append(errs, err)
		}
	case "name":
		for _, it := range items {
			printName(&k.out, objectGroupKind(it), it.GetName(), "", true)
		}
	}
	return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
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

// jsonUnmarshal decodes JSON, ignoring what does not fit.
func jsonUnmarshal(data []byte, v interface{}) error { return json.Unmarshal(data, v) }

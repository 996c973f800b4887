package kubectl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// builderOptions are the settings of cli-runtime's resource.Builder that kubectl's commands vary. The
// namespace is always the command's (kubectl.namespace), and -n makes files enforce it.
type builderOptions struct {
	selectorFlags
	selectAll          bool
	allowEmptySelector bool // ResourceTypeOrNameArgs(true, ...): TYPE alone lists everything
	// chunkSize is RequestChunksOf: the limit of each list request, 0 for a single request.
	chunkSize int64
	// validate is the builder's Schema: called for each document of a file before it is mapped.
	validate func(raw []byte, source string) error
}

// fetchMode is how the builder fetches the objects it resolves.
type fetchMode int

const (
	// fetchNone: RequireObject(false), objects named on the command line are not fetched.
	fetchNone fetchMode = iota
	// fetchLazy: the builder's default (RetrieveLazy), objects named on the command line are fetched; those
	// read from files are used as they are.
	fetchLazy
	// fetchLatest: Latest(), every object is fetched, those read from files too.
	fetchLatest
)

// fetches reports whether the builder fetches the object before the command sees it.
func (f fetchMode) fetches(it *info) bool {
	switch f {
	case fetchLatest:
		return true
	case fetchLazy:
		return it.object == nil
	}
	return false
}

// selection is what the command line names: objects by name or from files, or types to list.
type selection struct {
	// items are objects named on the command line (TYPE NAME..., TYPE/NAME...) or read from -f files.
	items []*info
	// lists are types to list with the selectors, when no names were given.
	lists []*mapping
	// singleItemImplied: one object was named (or one file given), so printers print it alone rather than
	// as a List.
	singleItemImplied bool
}

// builder is one command's resource.Builder, set up as every kubectl command sets it up (ContinueOnError,
// Flatten): newBuilder resolves the command line into a selection, then infos or bodies fetch it.
type builder struct {
	k    *kubectl
	opts builderOptions
	selection
	// errs are the errors of single documents met while reading files. Like every error of a single object
	// they are reported after what was found, not instead of it.
	errs []error
}

var (
	errMissingResource = errors.New(`You must provide one or more resources by argument or filename.
Example resource specifications include:
   '-f rsrc.yaml'
   '--filename=rsrc.json'
   '<resource> <name>'
   '<resource>'`)
	errFilesAndArgs = errors.New("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")
)

// newBuilder resolves a command's resource arguments or -f files (the Builder's FilenameParam,
// LabelSelectorParam, ResourceTypeOrNameArgs and Do): the objects the files hold, filtered by the label
// selector, or what the arguments name. An error that stops the command (a bad argument, an unknown type,
// a flag the playground cannot serve) is returned; those of single documents wait in b.errs.
func (k *kubectl) newBuilder(args []string, fo fileOptions, o builderOptions) (*builder, error) {
	if err := checkFileOptions(fo); err != nil {
		return nil, err
	}
	b := &builder{k: k, opts: o}
	if len(fo.filenames) == 0 {
		sel, err := k.selectArgs(args, o)
		if err != nil {
			return nil, err
		}
		b.selection = *sel
		return b, nil
	}
	if len(args) > 0 {
		return nil, errFilesAndArgs
	}
	infos, errs := k.readFiles(fo, o.validate)
	infos, err := filterByLabels(infos, o.labelSelector)
	if err != nil {
		return nil, err
	}
	b.items, b.errs = infos, errs
	b.singleItemImplied = len(fo.filenames) == 1
	return b, nil
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

// infos is the builder's Infos(): the objects of every list, then those named or read, each fetched when
// fetch says so. Errors of single objects do not stop the others: they are returned with what was found.
func (b *builder) infos(fetch fetchMode) ([]*info, []error) {
	var infos []*info
	errs := append([]error(nil), b.errs...)
	for _, m := range b.lists {
		listed, lerrs := b.k.listInfos(m, b.opts)
		infos = append(infos, listed...)
		errs = append(errs, lerrs...)
	}
	for _, it := range b.items {
		if fetch.fetches(it) {
			obj, err := b.k.fetch(it.mapping, it.namespace, it.name, "")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			it.object = obj
		}
		infos = append(infos, it)
	}
	return infos, errs
}

// fetchedBody is one answer the builder got: a page of a list, or one object, as the server sent it.
type fetchedBody struct {
	mapping *mapping
	body    []byte
}

// bodies is the builder with Latest() and TransformRequests, as kubectl get sets it: every list page and
// every object (named or read from a file) is requested with the Accept header given (a Table, when get
// prints one), and kept as the server answered. Errors of single objects are returned with what was found.
func (b *builder) bodies(accept, subresource string) ([]fetchedBody, []error) {
	var out []fetchedBody
	errs := append([]error(nil), b.errs...)
	for _, m := range b.lists {
		pages, err := b.k.list(m, b.opts, accept)
		for _, p := range pages {
			out = append(out, fetchedBody{mapping: m, body: p})
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, it := range b.items {
		body, err := b.k.getAs(it.mapping, it.namespace, it.name, subresource, accept)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, fetchedBody{mapping: it.mapping, body: body})
	}
	return out, errs
}

// resourceArgs are a command's resource arguments as ResourceTypeOrNameArgs sorts them.
type resourceArgs struct {
	// tuples are TYPE/NAME arguments.
	tuples [][2]string
	// resources are the types of a TYPE[,TYPE...] argument, aliases expanded.
	resources []string
	// names are the NAME arguments after TYPE.
	names []string
}

// selectArgs resolves resource arguments as Builder.ResourceTypeOrNameArgs and visitorResult do: types to
// list when a selector or --all is given (or TYPE alone, with allowEmptySelector), objects by name otherwise.
func (k *kubectl) selectArgs(args []string, o builderOptions) (*selection, error) {
	a, err := k.parseResourceArgs(args)
	if err != nil {
		return nil, err
	}
	if len(a.tuples) == 0 && len(a.names) == 0 && len(a.resources) > 0 && o.labelSelector == "" && o.allowEmptySelector {
		o.selectAll = true
	}
	switch {
	case o.labelSelector != "" || o.fieldSelector != "" || o.selectAll:
		return k.selectTypes(a)
	case len(a.tuples) != 0:
		return k.selectTuples(a.tuples, o)
	case len(a.names) != 0:
		return k.selectNames(a, o)
	case len(a.resources) != 0:
		for _, r := range a.resources {
			if _, err := k.mappingFor(r); err != nil {
				return nil, err
			}
		}
		return nil, fmt.Errorf("resource(s) were provided, but no name was specified")
	}
	return nil, errMissingResource
}

// parseResourceArgs sorts the arguments into TYPE/NAME tuples, or types and names.
func (k *kubectl) parseResourceArgs(args []string) (resourceArgs, error) {
	var a resourceArgs
	args = normalizeMultipleResourcesArgs(args)
	combined, err := hasCombinedTypeArgs(args)
	if err != nil {
		return a, err
	}
	if combined {
		for _, s := range args {
			seg := strings.Split(s, "/")
			if len(seg) != 2 {
				return a, fmt.Errorf("arguments in resource/name form may not have more than one slash")
			}
			if seg[0] == "" || seg[1] == "" || len(splitResourceArgument(seg[0])) != 1 {
				return a, fmt.Errorf("arguments in resource/name form must have a single resource and name")
			}
			a.tuples = append(a.tuples, [2]string{seg[0], seg[1]})
		}
		return a, nil
	}
	if len(args) == 0 {
		return a, nil
	}
	if args[0], err = k.replaceAliases(args[0]); err != nil {
		return a, err
	}
	a.resources = splitResourceArgument(args[0])
	a.names = append(a.names, args[1:]...)
	return a, nil
}

// selectTypes is visitBySelector: each type once, to be listed with the selectors.
func (k *kubectl) selectTypes(a resourceArgs) (*selection, error) {
	if len(a.names) != 0 {
		return nil, fmt.Errorf("name cannot be provided when a selector is specified")
	}
	if len(a.tuples) != 0 {
		return nil, fmt.Errorf("selectors and the all flag cannot be used when passing resource/name arguments")
	}
	if len(a.resources) == 0 {
		return nil, fmt.Errorf("at least one resource must be specified to use a selector")
	}
	sel := &selection{}
	seen := map[schema.GroupVersionKind]bool{}
	for _, r := range a.resources {
		m, err := k.mappingFor(r)
		if err != nil {
			return nil, err
		}
		if seen[m.gvk] {
			continue
		}
		seen[m.gvk] = true
		sel.lists = append(sel.lists, m)
	}
	return sel, nil
}

// selectTuples is visitByResource: TYPE/NAME arguments, every type mapped before any object is made.
func (k *kubectl) selectTuples(tuples [][2]string, o builderOptions) (*selection, error) {
	mappings := map[string]*mapping{}
	for _, t := range tuples {
		if _, ok := mappings[t[0]]; ok {
			continue
		}
		m, err := k.mappingFor(t[0])
		if err != nil {
			return nil, err
		}
		mappings[t[0]] = m
	}
	sel := &selection{singleItemImplied: len(tuples) == 1}
	for _, t := range tuples {
		it, err := k.namedInfo(mappings[t[0]], t[1], o)
		if err != nil {
			return nil, err
		}
		sel.items = append(sel.items, it)
	}
	return sel, nil
}

// selectNames is visitByName: TYPE NAME..., with a single type.
func (k *kubectl) selectNames(a resourceArgs, o builderOptions) (*selection, error) {
	if len(a.resources) > 1 {
		return nil, fmt.Errorf("you must specify only one resource")
	}
	m, err := k.mappingFor(a.resources[0])
	if err != nil {
		return nil, err
	}
	sel := &selection{singleItemImplied: len(a.names) == 1}
	for _, n := range a.names {
		it, err := k.namedInfo(m, n, o)
		if err != nil {
			return nil, err
		}
		sel.items = append(sel.items, it)
	}
	return sel, nil
}

// namedInfo is an object named on the command line, in the command's namespace when its type has one.
func (k *kubectl) namedInfo(m *mapping, name string, o builderOptions) (*info, error) {
	ns := k.namespace
	if !m.namespaced {
		ns = ""
	} else if ns == "" || o.allNamespaces {
		if o.allNamespaces {
			return nil, fmt.Errorf("a resource cannot be retrieved by name across all namespaces")
		}
		return nil, fmt.Errorf("namespace may not be empty when retrieving a resource by name")
	}
	return &info{mapping: m, namespace: ns, name: name}, nil
}

// replaceAliases expands categories in the first argument (Builder.ReplaceAliases): "all" becomes every
// resource in the category "all".
func (k *kubectl) replaceAliases(input string) (string, error) {
	var replaced []string
	for _, arg := range strings.Split(input, ",") {
		d, err := k.discover()
		if err != nil {
			return "", err
		}
		if grs, ok := d.expandCategory(arg); ok {
			var parts []string
			for _, gr := range grs {
				if gr.Group == "" {
					parts = append(parts, gr.Resource)
					continue
				}
				parts = append(parts, gr.Resource+"."+gr.Group)
			}
			arg = strings.Join(parts, ",")
		}
		replaced = append(replaced, arg)
	}
	return strings.Join(replaced, ","), nil
}

// normalizeMultipleResourcesArgs turns "TYPE1,TYPE2 NAME..." into TYPE/NAME tuples.
func normalizeMultipleResourcesArgs(args []string) []string {
	if len(args) >= 2 {
		resources := splitResourceArgument(args[0])
		if len(resources) > 1 {
			var out []string
			for _, r := range resources {
				for _, n := range args[1:] {
					out = append(out, r+"/"+n)
				}
			}
			return out
		}
	}
	return args
}

// hasCombinedTypeArgs reports whether the arguments are TYPE/NAME tuples; mixing them with other arguments
// is an error.
func hasCombinedTypeArgs(args []string) (bool, error) {
	slashes := 0
	for _, s := range args {
		if strings.Contains(s, "/") {
			slashes++
		}
	}
	switch {
	case slashes > 0 && slashes == len(args):
		return true, nil
	case slashes > 0:
		return true, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'")
	}
	return false, nil
}

// splitResourceArgument splits TYPE[,TYPE...], each type once.
func splitResourceArgument(arg string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range strings.Split(arg, ",") {
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// readFiles reads the objects of the -f files as the Builder's FilenameParam with Flatten() does: every
// document of every file in order, lists flattened, each mapped to its resource through discovery and put in
// the command's namespace. validate, when set, is called for each document before it is mapped, as
// kubectl's schema validation is.
func (k *kubectl) readFiles(fo fileOptions, validate func(raw []byte, source string) error) ([]*info, []error) {
	var infos []*info
	var errs []error
	for _, name := range fo.filenames {
		content, ok := k.opts.Files[name]
		if !ok {
			return infos, append(errs, fmt.Errorf("the path %q does not exist", name))
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(content), 4096)
		for {
			ext := runtime.RawExtension{}
			if err := dec.Decode(&ext); err != nil {
				if err == io.EOF {
					break
				}
				// The decoder cannot resume after a syntax error: the rest of the file is lost, as in kubectl.
				errs = append(errs, fmt.Errorf("error parsing %s: %v", name, err))
				break
			}
			raw := bytes.TrimSpace(ext.Raw)
			if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
				continue
			}
			if validate != nil {
				if err := validate(raw, name); err != nil {
					errs = append(errs, err)
					// StreamVisitor stops reading the file at a validation error.
					break
				}
			}
			items, err := k.infosForData(raw, name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, it := range items {
				if err := k.placeInNamespace(it); err != nil {
					errs = append(errs, err)
					continue
				}
				infos = append(infos, it)
			}
		}
	}
	return infos, errs
}

// placeInNamespace gives an object read from a file the command's namespace (SetNamespace, or
// RequireNamespace when -n was given): an object of another namespace is then an error, and a
// cluster-scoped object has none.
func (k *kubectl) placeInNamespace(it *info) error {
	if !it.mapping.namespaced {
		it.namespace = ""
		it.object.SetNamespace("")
		return nil
	}
	if it.namespace == "" {
		it.namespace = k.namespace
		it.object.SetNamespace(k.namespace)
		return nil
	}
	if k.explicitNamespace && it.namespace != k.namespace {
		return fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", it.namespace, k.namespace, it.namespace)
	}
	return nil
}

// infosForData decodes one document into its object(s): a List (any kind with items) is flattened.
func (k *kubectl) infosForData(raw []byte, source string) ([]*info, error) {
	obj, gvk, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("unable to decode %q: %v", source, err)
	}
	if list, ok := obj.(*unstructured.UnstructuredList); ok {
		var out []*info
		for i := range list.Items {
			item := list.Items[i]
			data, err := item.MarshalJSON()
			if err != nil {
				return out, err
			}
			sub, err := k.infosForData(data, source)
			if err != nil {
				return out, err
			}
			out = append(out, sub...)
		}
		return out, nil
	}
	u := obj.(*unstructured.Unstructured)
	m, err := k.mappingForGVK(*gvk)
	if err != nil {
		var nk *noKindMatchError
		if errors.As(err, &nk) {
			return nil, fmt.Errorf("resource mapping not found for name: %q namespace: %q from %q: %w\nensure CRDs are installed first", u.GetName(), u.GetNamespace(), source, err)
		}
		return nil, fmt.Errorf("unable to recognize %q: %v", source, err)
	}
	return []*info{{mapping: m, namespace: u.GetNamespace(), name: u.GetName(), object: u, source: source}}, nil
}

// filterByLabels keeps the file objects matching a label selector (FilterByLabelSelector).
func filterByLabels(infos []*info, selector string) ([]*info, error) {
	if selector == "" {
		return infos, nil
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("the provided selector %q is not valid: %v", selector, err)
	}
	var out []*info
	for _, it := range infos {
		if sel.Matches(labels.Set(it.object.GetLabels())) {
			out = append(out, it)
		}
	}
	return out, nil
}

// listInfos lists m's objects as infos, page by page as list does, each with its kind set as the list's
// items may lack it. Errors of single pages do not stop the others: they are all returned, with what could
// be read.
func (k *kubectl) listInfos(m *mapping, o builderOptions) ([]*info, []error) {
	var infos []*info
	var errs []error
	pages, err := k.list(m, o, acceptJSON)
	for _, p := range pages {
		list, derr := decodeObject(p)
		if derr != nil {
			errs = append(errs, derr)
			continue
		}
		items, _ := list.Object["items"].([]interface{})
		for _, item := range items {
			im, _ := item.(map[string]interface{})
			u := &unstructured.Unstructured{Object: im}
			if u.GetKind() == "" {
				u.SetKind(m.gvk.Kind)
				u.SetAPIVersion(m.gvk.GroupVersion().String())
			}
			infos = append(infos, &info{mapping: m, namespace: u.GetNamespace(), name: u.GetName(), object: u})
		}
	}
	if err != nil {
		errs = append(errs, err)
	}
	return infos, errs
}

// list is the Builder's selector visitor: m's collection in the command's namespace (every namespace with
// -A), with the selectors, in pages of o.chunkSize. It returns each page's body as the server sent it, and
// those read before an error with the error.
func (k *kubectl) list(m *mapping, o builderOptions, accept string) ([][]byte, error) {
	ns := k.namespace
	if !m.namespaced || o.allNamespaces {
		ns = ""
	}
	var pages [][]byte
	cont := ""
	for {
		q := url.Values{}
		if o.labelSelector != "" {
			q.Set("labelSelector", o.labelSelector)
		}
		if o.fieldSelector != "" {
			q.Set("fieldSelector", o.fieldSelector)
		}
		if o.chunkSize > 0 {
			q.Set("limit", strconv.FormatInt(o.chunkSize, 10))
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		body, err := k.client.call(request{method: "GET", path: m.path(ns, ""), query: q, accept: accept, resource: m.gvr.GroupResource()})
		if err != nil {
			return pages, enhanceListError(err, o, m.gvr.String())
		}
		pages = append(pages, body)
		var meta struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(body, &meta)
		if meta.Metadata.Continue == "" {
			return pages, nil
		}
		cont = meta.Metadata.Continue
	}
}

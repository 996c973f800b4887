package kubectl

import (
	"bytes"
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

// info is one object a command works on: cli-runtime's resource.Info.
type info struct {
	mapping   *mapping
	namespace string
	name      string
	// object is the object as read from a file or fetched from the server; nil until fetched.
	object *unstructured.Unstructured
	// source is the file the object came from, "" for objects named on the command line.
	source string
}

// String is Info.String() as kubectl prints it in a few error messages.
func (i *info) String() string {
	basicInfo := fmt.Sprintf("Name: %q, Namespace: %q", i.name, i.namespace)
	if i.mapping != nil {
		basicInfo += "\nResource: " + fmt.Sprintf("%q", i.mapping.gvr.String())
	}
	if i.object != nil {
		basicInfo += "\nObject: " + fmt.Sprintf("%q", i.object.Object)
	}
	return basicInfo
}

// path is the object's URL path, or its collection's when name is empty.
func (m *mapping) path(namespace, name string) string {
	var b strings.Builder
	if m.gvr.Group == "" {
		b.WriteString("/api/" + m.gvr.Version)
	} else {
		b.WriteString("/apis/" + m.gvr.Group + "/" + m.gvr.Version)
	}
	if m.namespaced && namespace != "" {
		b.WriteString("/namespaces/" + namespace)
	}
	b.WriteString("/" + m.gvr.Resource)
	if name != "" {
		b.WriteString("/" + name)
	}
	return b.String()
}

// selection is what the resource arguments of a command name: objects by name, or types to list.
type selection struct {
	// items are objects named on the command line (TYPE NAME..., TYPE/NAME...).
	items []*info
	// lists are types to list with the selectors, when no names were given.
	lists []*mapping
	// singleItemImplied: one object was named, so printers print it alone rather than as a List.
	singleItemImplied bool
}

// builderOptions are the Builder settings a command uses.
type builderOptions struct {
	namespace          string
	allNamespaces      bool
	labelSelector      string
	fieldSelector      string
	selectAll          bool
	allowEmptySelector bool // ResourceTypeOrNameArgs(true, ...): TYPE alone lists everything
}

var errMissingResource = errors.New(`You must provide one or more resources by argument or filename.
Example resource specifications include:
   '-f rsrc.yaml'
   '--filename=rsrc.json'
   '<resource> <name>'
   '<resource>'`)

// selectArgs resolves resource arguments as Builder.ResourceTypeOrNameArgs and visitorResult do.
func (k *kubectl) selectArgs(args []string, o builderOptions) (*selection, error) {
	args = normalizeMultipleResourcesArgs(args)
	var (
		tuples    [][2]string
		resources []string
		names     []string
	)
	combined, err := hasCombinedTypeArgs(args)
	if err != nil {
		return nil, err
	}
	if combined {
		for _, s := range args {
			seg := strings.Split(s, "/")
			if len(seg) != 2 {
				return nil, fmt.Errorf("arguments in resource/name form may not have more than one slash")
			}
			if seg[0] == "" || seg[1] == "" || len(splitResourceArgument(seg[0])) != 1 {
				return nil, fmt.Errorf("arguments in resource/name form must have a single resource and name")
			}
			tuples = append(tuples, [2]string{seg[0], seg[1]})
		}
	} else {
		if len(args) > 0 {
			a0, err := k.replaceAliases(args[0])
			if err != nil {
				return nil, err
			}
			args[0] = a0
		}
		switch {
		case len(args) >= 2:
			names = append(names, args[1:]...)
			resources = splitResourceArgument(args[0])
		case len(args) == 1:
			resources = splitResourceArgument(args[0])
			if o.labelSelector == "" && o.allowEmptySelector {
				o.selectAll = true
			}
		}
	}
	if o.labelSelector != "" || o.fieldSelector != "" || o.selectAll {
		if len(names) != 0 {
			return nil, fmt.Errorf("name cannot be provided when a selector is specified")
		}
		if len(tuples) != 0 {
			return nil, fmt.Errorf("selectors and the all flag cannot be used when passing resource/name arguments")
		}
		if len(resources) == 0 {
			return nil, fmt.Errorf("at least one resource must be specified to use a selector")
		}
		sel := &selection{}
		seen := map[schema.GroupVersionKind]bool{}
		for _, r := range resources {
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
	if len(tuples) != 0 {
		sel := &selection{singleItemImplied: len(tuples) == 1}
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
		for _, t := range tuples {
			it, err := k.namedInfo(mappings[t[0]], t[1], o)
			if err != nil {
				return nil, err
			}
			sel.items = append(sel.items, it)
		}
		return sel, nil
	}
	if len(names) != 0 {
		if len(resources) > 1 {
			return nil, fmt.Errorf("you must specify only one resource")
		}
		m, err := k.mappingFor(resources[0])
		if err != nil {
			return nil, err
		}
		sel := &selection{singleItemImplied: len(names) == 1}
		for _, n := range names {
			it, err := k.namedInfo(m, n, o)
			if err != nil {
				return nil, err
			}
			sel.items = append(sel.items, it)
		}
		return sel, nil
	}
	if len(resources) != 0 {
		for _, r := range resources {
			if _, err := k.mappingFor(r); err != nil {
				return nil, err
			}
		}
		return nil, fmt.Errorf("resource(s) were provided, but no name was specified")
	}
	return nil, errMissingResource
}

func (k *kubectl) namedInfo(m *mapping, name string, o builderOptions) (*info, error) {
	ns := o.namespace
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

// fileOptions are kubectl's -f flags.
type fileOptions struct {
	filenames []string
	recursive bool
	kustomize string
}

// readFiles reads the objects of the -f files as the Builder's FilenameParam with Flatten() does: every
// document of every file in order, lists flattened, each mapped to its resource through discovery.
// enforceNamespace is true when -n was given: objects of another namespace are then an error. validate is
// called for each document before it is mapped, as kubectl's schema validation is.
func (k *kubectl) readFiles(fo fileOptions, namespace string, enforceNamespace bool, validate func(raw []byte, source string) error) ([]*info, []error) {
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
				if it.mapping.namespaced {
					if it.namespace == "" {
						it.namespace = namespace
						it.object.SetNamespace(namespace)
					} else if enforceNamespace && it.namespace != namespace {
						errs = append(errs, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", it.namespace, namespace, it.namespace))
						continue
					}
				} else {
					it.namespace = ""
					it.object.SetNamespace("")
				}
				infos = append(infos, it)
			}
		}
	}
	return infos, errs
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

// get fetches an object (resource.Helper.Get).
func (k *kubectl) get(m *mapping, namespace, name, subresource string) (*unstructured.Unstructured, error) {
	p := m.path(namespace, name)
	if subresource != "" {
		p += "/" + subresource
	}
	body, err := k.client.call(request{method: "GET", path: p, accept: acceptJSON, resource: m.gvr.GroupResource(), name: name})
	if err != nil {
		return nil, err
	}
	return decodeObject(body)
}

// list fetches a collection in chunks of chunkSize, as the Builder's selector visitor does, and returns each
// page's body.
// listInfos lists m's objects in namespace, page by page as list does, as infos. Errors of single pages do not
// stop the others: they are all returned, with what could be read.
func (k *kubectl) listInfos(m *mapping, namespace string, o builderOptions, chunkSize int64) ([]*info, []error) {
	var infos []*info
	var errs []error
	pages, err := k.list(m, namespace, o, chunkSize, acceptJSON, nil)
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
			infos = append(infos, &info{mapping: m, namespace: u.GetNamespace(), name: u.GetName(), object: u})
		}
	}
	if err != nil {
		errs = append(errs, err)
	}
	return infos, errs
}

func (k *kubectl) list(m *mapping, namespace string, o builderOptions, chunkSize int64, accept string, extra url.Values) ([][]byte, error) {
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
		if chunkSize > 0 {
			q.Set("limit", strconv.FormatInt(chunkSize, 10))
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		for key, vs := range extra {
			q[key] = vs
		}
		ns := namespace
		if !m.namespaced || o.allNamespaces {
			ns = ""
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
		_ = jsonUnmarshal(body, &meta)
		if meta.Metadata.Continue == "" {
			return pages, nil
		}
		cont = meta.Metadata.Continue
	}
}

// decodeObject decodes a server response into an object, numbers as int64 or float64 like kubectl's
// unstructured decoder.
func decodeObject(body []byte) (*unstructured.Unstructured, error) {
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(body, nil, nil)
	if err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o, nil
	case *unstructured.UnstructuredList:
		u := &unstructured.Unstructured{Object: o.Object}
		items := make([]interface{}, len(o.Items))
		for i := range o.Items {
			items[i] = o.Items[i].Object
		}
		u.Object["items"] = items
		return u, nil
	}
	return nil, fmt.Errorf("unexpected object %T", obj)
}

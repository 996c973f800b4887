package main

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// Reading a document as kubectl v1.37 reads it before it sends it. kubectl create -f (and apply, replace)
// read files through k8s.io/cli-runtime v0.37.2's resource.Builder (Unstructured, Flatten). Per file and
// per object that is, in order:
//
//	pkg/resource/visitor.go  FileVisitor.Visit     transform.NewReader(f, unicode.BOMOverride(unicode.UTF8.NewDecoder()))
//	pkg/resource/visitor.go  StreamVisitor.Visit   yaml.NewYAMLOrJSONDecoder(r, 4096).Decode(&runtime.RawExtension{})
//	                                               (apimachinery util/yaml: a JSON stream through encoding/json,
//	                                               else YAMLToJSONDecoder: YAMLReader's documents through
//	                                               sigs.k8s.io/yaml.Unmarshal), bytes.TrimSpace, "" and null skipped
//	pkg/resource/mapper.go   mapper.infoForData    metadataValidatingDecoder{unstructured.UnstructuredJSONScheme}.Decode
//	pkg/resource/visitor.go  FlattenListVisitor    meta.IsListType, meta.ExtractList, runtime.DecodeList, and
//	                                               mapper.infoForObject's unstructuredscheme typer per item
//	pkg/resource/visitor.go  SetNamespace, FilterNamespace (Builder.Do's helpers: need the REST mapping's scope)
//	pkg/resource/helper.go   Helper.CreateWithOptions(modify=true)  the object's resourceVersion cleared
//	pkg/resource/scheme.go   dynamicCodec.Encode   unstructured.UnstructuredJSONScheme.Encode: the request body
//
// The functions here call those upstream functions in that order; the only code copied is the glue between
// them (cli-runtime is not a dependency of this module: it would bring kustomize). What they leave out needs
// the server: the REST mapping (an unknown kind), the namespace's default (kubectlNamespace does it once the
// scope is known), and client-side validation: with --validate=strict or warn (the default is strict)
// kubectl's ParamVerifyingSchema refuses a document without a string apiVersion and kind ("error validating
// data: apiVersion not set") before it decodes it, and validates against the OpenAPI schema only when the
// server lacks field validation, which every supported server has.

// kubectlObject is one object kubectl reads from a document: the JSON it sends, or why it sends nothing.
type kubectlObject struct {
	// item is the object's place in the document's List: nil for the document itself, [i] for items[i], and
	// [i, j] for items[j] of a List that is items[i] (FlattenListVisitor flattens Lists in Lists).
	item []int
	// json is the request body: the object as kubectl create -f sends it (keys sorted, as encoding/json
	// writes a map; a final newline). kubectl apply --server-side sends the same bytes as its PATCH;
	// client-side apply adds its last-applied-configuration annotation.
	json []byte
	// err is kubectl's client-side refusal of the document or item: it sends nothing for it, and goes on
	// with the next.
	err error
}

// kubectlJSON is the JSON kubectl sends for one document that is one object: nil when it sends nothing
// (the document is only comments, or null), an error when it refuses the document on the client, or when
// the document is more than one object (a List, or several JSON values: see kubectlObjects).
func kubectlJSON(src string) ([]byte, error) {
	objs, err := kubectlObjects(src)
	if err != nil {
		return nil, err
	}
	switch {
	case len(objs) == 0:
		return nil, nil
	case len(objs) == 1 && objs[0].item == nil:
		return objs[0].json, objs[0].err
	}
	return nil, fmt.Errorf("kubectl sends %d objects for this document (a List's items, or several JSON values), not one", len(objs))
}

// kubectlObjects reads a text (one document, or a stream of them) as kubectl's StreamVisitor does, and
// returns each object it sends, in its order (a List's items flattened, a List's Lists after their
// siblings, as FlattenListVisitor queues them). The error is a parse error, where kubectl stops reading
// the file ("error parsing FILE: ..."): the objects before it are still sent. A document or item kubectl
// refuses but reads past ("unable to decode FILE: ...") is an object with its err.
func kubectlObjects(src string) ([]kubectlObject, error) {
	// FileVisitor.Visit: a UTF-16 file with a byte order mark is decoded, a UTF-8 one's mark dropped, and
	// bytes that are not UTF-8 become U+FFFD. For a text expandOperands read this changes nothing: it has
	// done the same to the whole file.
	r := transform.NewReader(strings.NewReader(src), unicode.BOMOverride(unicode.UTF8.NewDecoder()))
	d := yaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []kubectlObject
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, fmt.Errorf("error parsing: %v", err)
		}
		ext.Raw = bytes.TrimSpace(ext.Raw)
		if len(ext.Raw) == 0 || bytes.Equal(ext.Raw, []byte("null")) {
			continue
		}
		obj, _, err := kubectlDecoder.Decode(ext.Raw, nil, nil)
		if err != nil {
			out = append(out, kubectlObject{err: fmt.Errorf("unable to decode: %v", err)})
			continue
		}
		out = append(out, kubectlFlatten(obj)...)
	}
}

// kubectlDecoder is the decoder of cli-runtime's Builder.Unstructured(): metadataValidatingDecoder over
// unstructured.UnstructuredJSONScheme.
var kubectlDecoder runtime.Decoder = metadataValidatingDecoder{unstructured.UnstructuredJSONScheme}

// metadataValidatingDecoder is cli-runtime's (pkg/resource/metadata_decoder.go), which is unexported: an
// unstructured object must also decode into ObjectMeta, so that kubectl refuses metadata of the wrong
// types (labels that are not strings) rather than dropping them.
type metadataValidatingDecoder struct {
	decoder runtime.Decoder
}

// Decode is metadataValidatingDecoder.Decode.
func (m metadataValidatingDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := m.decoder.Decode(data, defaults, into)
	if err != nil {
		return obj, gvk, err
	}
	if _, isUnstructured := obj.(runtime.Unstructured); !isUnstructured {
		return obj, gvk, err
	}
	v := &metadataOnlyObject{}
	if typedErr := utiljson.Unmarshal(data, v); typedErr != nil {
		return obj, gvk, typedErr
	}
	return obj, gvk, err
}

// metadataOnlyObject is cli-runtime's, for metadataValidatingDecoder.
type metadataOnlyObject struct {
	metav1.TypeMeta   `json:""`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// kubectlFlatten is FlattenListVisitor.Visit's body for one decoded document, with each object's place
// kept: a document that is not a List is itself; a List is its items, a List among them queued after them
// and flattened in turn. A List whose items cannot be extracted fails whole (kubectl sends none of it); an
// item the typer cannot type (no kind or apiVersion) fails alone.
func kubectlFlatten(obj runtime.Object) []kubectlObject {
	if !meta.IsListType(obj) {
		return []kubectlObject{kubectlSend(nil, obj)}
	}
	type queued struct {
		item []int
		obj  runtime.Object
	}
	var items []queued
	toProcess := []queued{{nil, obj}}
	for i := 0; i < len(toProcess); i++ {
		curr := toProcess[i]
		if !meta.IsListType(curr.obj) {
			items = append(items, curr)
			continue
		}
		currItems, err := meta.ExtractList(curr.obj)
		if err != nil {
			return []kubectlObject{{err: err}}
		}
		if errs := runtime.DecodeList(currItems, kubectlDecoder); len(errs) > 0 {
			return []kubectlObject{{err: utilerrors.NewAggregate(errs)}}
		}
		for j, it := range currItems {
			toProcess = append(toProcess, queued{append(append([]int(nil), curr.item...), j), it})
		}
	}
	typer := unstructuredscheme.NewUnstructuredObjectTyper()
	var out []kubectlObject
	for _, it := range items {
		// mapper.infoForObject: the item must have a kind and an apiVersion (an item with neither took the
		// List's: UnstructuredJSONScheme's decodeToList).
		if _, _, err := typer.ObjectKinds(it.obj); err != nil {
			out = append(out, kubectlObject{item: it.item, err: fmt.Errorf("unable to get type info from the object %q: %v", reflect.TypeOf(it.obj), err)})
			continue
		}
		out = append(out, kubectlSend(it.item, it.obj))
	}
	return out
}

// kubectlSend is what kubectl create does to an object it read, short of the namespace (kubectlNamespace):
// Helper.CreateWithOptions with modify clears its resourceVersion (an exported object is created anew),
// and the REST client encodes it with dynamicCodec, which is UnstructuredJSONScheme.
func kubectlSend(item []int, obj runtime.Object) kubectlObject {
	accessor := meta.NewAccessor()
	if version, err := accessor.ResourceVersion(obj); err == nil && version != "" {
		if err := accessor.SetResourceVersion(obj, ""); err != nil {
			return kubectlObject{item: item, err: err}
		}
	}
	b, err := runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		return kubectlObject{item: item, err: err}
	}
	return kubectlObject{item: item, json: b}
}

// kubectlNamespace does to a body kubectlObjects returned what Builder.Do's SetNamespace and
// FilterNamespace do once the REST mapping says the kind's scope: a namespaced object without a
// namespace gets the default one (kubectl's --namespace, or the kubeconfig context's, or "default"), and
// a cluster-scoped object loses any it has.
func kubectlNamespace(body []byte, namespaced bool, namespace string) ([]byte, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(body); err != nil {
		return nil, err
	}
	switch {
	case !namespaced:
		u.SetNamespace("")
	case u.GetNamespace() == "":
		u.SetNamespace(namespace)
	}
	return runtime.Encode(unstructured.UnstructuredJSONScheme, u)
}

// kubectlText is a file's text as kubectl's FileVisitor reads it: UTF-16 with a byte order mark decoded,
// a UTF-8 byte order mark dropped, bytes that are not UTF-8 replaced by U+FFFD. Line breaks are kept, so
// that lines are numbered as in the file.
func kubectlText(b []byte) string {
	out, _, err := transform.Bytes(unicode.BOMOverride(unicode.UTF8.NewDecoder()), b)
	if err != nil {
		// The UTF-8 decoder replaces what it cannot decode; an error here would be the transformer's own.
		return string(b)
	}
	return string(out)
}

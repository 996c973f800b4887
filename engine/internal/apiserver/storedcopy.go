//go:build !js

package apiserver

import (
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The answer of a create is the storage codec's decode of the bytes it wrote. In the storage version the codec
// encodes the object without conversion, as JSON, and parsing that JSON gives a copy of the object's content
// (jsonCopy): the server's build starts the decode from the copy rather than from the bytes, and goes on with
// the codec's own steps (decodeParsed). The browser's build decodes the bytes (storedcopy_js.go): there the size
// of this code matters more than its speed.

// decodeWritten is the storage codec's decode of the bytes that encode written, from a copy of written; false
// (for another version, a value the copy declines, or any error) leaves the decode to the codec.
func (r *crRequest) decodeWritten(written *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	if written == nil || written.Object == nil || r.vi.name != r.ci.storageVersion || written.GroupVersionKind() != r.vi.kind {
		return nil, false
	}
	content, ok := jsonCopy(written.Object, 1)
	if !ok {
		return nil, false
	}
	return r.decodeParsed(content.(map[string]interface{}))
}

// decodeParsed is the storage codec's decode into the request's version (k8s.io/apimachinery's versioning
// codec Decode into an Unstructured of the request's kind) of stored JSON already parsed into content: the JSON
// scheme's check for a kind, the decoder's repair and coercion, the storage version's defaults, the conversion
// (with its coercion). It reports false where the codec fails, leaving the error to the codec. The conversion
// is the codec's converter without its copy of the object (the safe converter converts a deep copy with the
// unsafe one): the object is decodeParsed's own, as the codec's is.
func (r *crRequest) decodeParsed(content map[string]interface{}) (*unstructured.Unstructured, bool) {
	dec, conv, def := r.ci.storageDecoding()
	conv.delegate = r.ci.unsafeConverter
	obj := &unstructured.Unstructured{Object: content}
	if obj.GetKind() == "" {
		return nil, false
	}
	if _, err := dec.coercer.apply(obj); err != nil {
		return nil, false
	}
	nodes := jsonNodes(obj.Object)
	def.Default(obj)
	into := &unstructured.Unstructured{}
	into.SetGroupVersionKind(r.vi.kind)
	if jsonNodes(obj.Object) == nodes {
		// The defaults changed nothing (they only add keys, or values where there were nulls, and either adds
		// to jsonNodes), so the object is what the decoder's coercion made of it, which the conversion's
		// coercion (the same steps with the same schema, neither dropping nor repairing) leaves as it is, and
		// without an error: the metadata is already ObjectMeta's encoding, and the pruning, the removal of
		// nulls and the embedded resources' metadata are done. The conversion itself (within a version, only
		// its apiVersion) remains. TestStoredResultCopy and FuzzStoredResultCopy compare with the codec.
		if err := conv.delegate.Convert(obj, into, r.vi.kind.GroupVersion()); err != nil {
			return nil, false
		}
		return into, true
	}
	if err := conv.Convert(obj, into, r.vi.kind.GroupVersion()); err != nil {
		return nil, false
	}
	return into, true
}

// jsonNodes counts the object keys and the values other than null in v: whatever the structural defaulter does
// (add a key; put a default where a null was) makes it larger.
func jsonNodes(v interface{}) int {
	switch v := v.(type) {
	case nil:
		return 0
	case map[string]interface{}:
		n := 1 + len(v)
		for _, e := range v {
			n += jsonNodes(e)
		}
		return n
	case []interface{}:
		n := 1
		for _, e := range v {
			n += jsonNodes(e)
		}
		return n
	}
	return 1
}

// jsonMaxDepth bounds the nesting jsonCopy copies, below the JSON decoder's limit (10000 levels), past which
// the codec's decode fails.
const jsonMaxDepth = 9000

// jsonCopy returns what encoding v as JSON (encoding/json) and decoding it again as the unstructured JSON scheme
// does (k8s.io/apimachinery/pkg/util/json: integers as int64) gives, for the values that the round trip keeps
// as they are: objects, arrays, strings of valid UTF-8, int64, bool and null. Anything else (a float, whose
// JSON may come back as an int64; a string that is not UTF-8, which the encoder changes; a Go type other than
// these) reports false. depth is v's nesting level, 1 for the object itself.
func jsonCopy(v interface{}, depth int) (interface{}, bool) {
	switch v := v.(type) {
	case nil, int64, bool:
		return v, true
	case string:
		return v, utf8.ValidString(v)
	case map[string]interface{}:
		if v == nil {
			return nil, true // encoded as null
		}
		if depth > jsonMaxDepth {
			return nil, false
		}
		out := make(map[string]interface{}, len(v))
		for k, e := range v {
			c, ok := jsonCopy(e, depth+1)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []interface{}:
		if v == nil {
			return nil, true
		}
		if depth > jsonMaxDepth {
			return nil, false
		}
		out := make([]interface{}, len(v))
		for i, e := range v {
			c, ok := jsonCopy(e, depth+1)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

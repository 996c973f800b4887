//go:build !js

package apiserver

import (
	"context"
	"slices"
	"strconv"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The server writes each custom resource twice as JSON, for etcd and for the answer: appendJSON writes the same
// bytes as encoding/json (the unstructured JSON scheme's Encoder) for trees of the unstructured JSON types,
// without its reflection, which is most of the cost of those writes. The browser's engine does without it
// (js.go): its size matters more there than this speed.

// jsonEncodeMaxDepth is where appendJSON gives up and leaves the tree to encoding/json, which detects cycles past
// this depth.
const jsonEncodeMaxDepth = 1000

// appendJSON appends v as encoding/json encodes it (HTML-escaped strings, object keys sorted), for objects,
// arrays, strings, int64, bool and null; it reports false for anything else (floats, other Go types), which the
// caller leaves to encoding/json.
func appendJSON(dst []byte, v interface{}, depth int) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return appendJSONString(dst, v), true
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case map[string]interface{}:
		if v == nil {
			return append(dst, "null"...), true
		}
		if depth > jsonEncodeMaxDepth {
			return dst, false
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendJSONString(dst, k), ':')
			var ok bool
			if dst, ok = appendJSON(dst, v[k], depth+1); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	case []interface{}:
		if v == nil {
			return append(dst, "null"...), true
		}
		if depth > jsonEncodeMaxDepth {
			return dst, false
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendJSON(dst, e, depth+1); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	}
	return dst, false
}

// appendJSONList appends list as the unstructured JSON scheme encodes it (its fields and its items' objects
// under "items", object keys sorted), or reports false as appendJSON does. It looks at ctx every
// listContextCheck items and stops with its error once it is done: a long list's encoding is work that a
// request past its deadline, already answered, must not go on with.
func appendJSONList(ctx context.Context, dst []byte, list *unstructured.UnstructuredList) ([]byte, bool, error) {
	keys := make([]string, 0, len(list.Object)+1)
	for k := range list.Object {
		if k != "items" {
			keys = append(keys, k)
		}
	}
	keys = append(keys, "items")
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendJSONString(dst, k), ':')
		if k != "items" {
			var ok bool
			if dst, ok = appendJSON(dst, list.Object[k], 2); !ok {
				return dst, false, nil
			}
			continue
		}
		dst = append(dst, '[')
		for j := range list.Items {
			if j%listContextCheck == 0 {
				if err := ctx.Err(); err != nil {
					return dst, false, err
				}
			}
			if j > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendJSON(dst, list.Items[j].Object, 3); !ok {
				return dst, false, nil
			}
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), true, nil
}

const jsonHex = "0123456789abcdef"

// appendJSONString is encoding/json's appendString with HTML escaping, the Encoder's default.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', jsonHex[b>>4], jsonHex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', jsonHex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

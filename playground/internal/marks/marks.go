// Package marks compares the object a user wrote with the object the API stored and names each difference:
// a field pruned, a default filled in, a value the server set or kept. It reads two answers and explains
// the gap between them; it does not decide what the server does.
package marks

import (
	"encoding/json"
	"sort"
	"strconv"

	"crdplay/playground/internal/yamlpos"
)

// Kind is what happened to a field between the input and the stored object.
type Kind string

const (
	// Pruned: in the input, not stored (an unknown field, or a null the schema does not allow).
	Pruned Kind = "pruned"
	// Defaulted: not in the input (or null there), stored with the schema's default.
	Defaulted Kind = "defaulted"
	// Server: metadata the server sets itself (uid, creationTimestamp, resourceVersion, generation,
	// managedFields, namespace, deletionTimestamp).
	Server Kind = "server"
	// Ignored: the endpoint does not write this part of the object (status through the main resource when
	// the status subresource is on; everything but status, metadata included, through /status), so the
	// stored value is the old one or none.
	Ignored Kind = "ignored"
	// Changed: stored with another value than the input's, for any other reason.
	Changed Kind = "changed"
)

// Mark is one difference.
type Mark struct {
	Kind Kind `json:"kind"`
	// Path is the field's object path: spec.list[0].name.
	Path string `json:"path"`
	// Value is the stored value (for pruned fields, the input's).
	Value json.RawMessage `json:"value,omitempty"`
	// Input is the field's span in the object's text; Stored its span in the stored YAML. Either may be
	// missing: a defaulted field has no input, a pruned one nothing stored.
	Input  *yamlpos.Span `json:"input,omitempty"`
	Stored *yamlpos.Span `json:"stored,omitempty"`

	// Segs is Path as segments, for positions.
	Segs []yamlpos.Seg `json:"-"`
}

// Options say which parts of the object the endpoint writes.
type Options struct {
	// StatusIgnored: the main resource of a CRD with the status subresource (status is not written).
	StatusIgnored bool
	// StatusOnly: the /status subresource (only status and a few metadata fields are written).
	StatusOnly bool
}

// maxMarks bounds the list for a pathological object; the first ones are the useful ones anyway.
const maxMarks = 2000

// serverMeta are the metadata fields the server owns.
var serverMeta = map[string]bool{
	"uid": true, "creationTimestamp": true, "resourceVersion": true, "generation": true, "managedFields": true,
	"namespace": true, "deletionTimestamp": true, "deletionGracePeriodSeconds": true, "selfLink": true,
	"name": true, // from generateName
}

// Diff returns the differences between input and stored, two JSON values (maps, slices, strings, bool,
// json.Number or float64, nil), in path order.
func Diff(input, stored interface{}, opts Options) []Mark {
	d := differ{opts: opts}
	d.walk(input, stored, nil, true, true, 0)
	sort.SliceStable(d.out, func(i, j int) bool { return d.out[i].Path < d.out[j].Path })
	return d.out
}

type differ struct {
	opts Options
	out  []Mark
}

func (d *differ) add(k Kind, segs []yamlpos.Seg, v interface{}) {
	if len(d.out) >= maxMarks {
		return
	}
	raw, _ := json.Marshal(v)
	d.out = append(d.out, Mark{Kind: k, Path: yamlpos.FormatSegs(segs), Value: raw, Segs: append([]yamlpos.Seg(nil), segs...)})
}

// kindAt classifies a difference at segs when nothing more specific applies.
func (d *differ) kindAt(segs []yamlpos.Seg, fallback Kind) Kind {
	if len(segs) == 0 {
		return fallback
	}
	top := segs[0].Key
	switch {
	case top == "metadata" && len(segs) >= 2 && serverMeta[segs[1].Key]:
		return Server
	case d.opts.StatusIgnored && top == "status":
		return Ignored
	case d.opts.StatusOnly && top != "status" && top != "apiVersion" && top != "kind":
		return Ignored
	}
	return fallback
}

func (d *differ) walk(in, st interface{}, segs []yamlpos.Seg, inOK, stOK bool, depth int) {
	if len(d.out) >= maxMarks || depth > 1000 {
		return
	}
	switch {
	case inOK && !stOK:
		d.add(d.kindAt(segs, Pruned), segs, in)
		return
	case !inOK && stOK:
		d.add(d.kindAt(segs, Defaulted), segs, st)
		return
	}
	im, iIsMap := in.(map[string]interface{})
	sm, sIsMap := st.(map[string]interface{})
	if iIsMap && sIsMap {
		keys := map[string]bool{}
		for k := range im {
			keys[k] = true
		}
		for k := range sm {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			iv, iok := im[k]
			sv, sok := sm[k]
			next := append(segs, yamlpos.K(k))
			if iok && iv == nil && sok && sv != nil {
				// A null the server replaced: a default for a non-nullable field.
				d.add(d.kindAt(next, Defaulted), next, sv)
				continue
			}
			d.walk(iv, sv, next, iok, sok, depth+1)
		}
		return
	}
	il, iIsList := in.([]interface{})
	sl, sIsList := st.([]interface{})
	if iIsList && sIsList && len(il) == len(sl) {
		for i := range il {
			d.walk(il[i], sl[i], append(segs, yamlpos.I(i)), true, true, depth+1)
		}
		return
	}
	if !equalScalar(in, st) {
		d.add(d.kindAt(segs, Changed), segs, st)
	}
}

// equalScalar compares two leaves (or mismatched collections); numbers by value, since YAML's 1.0 is
// JSON's 1.0 but the server may print it as 1.
func equalScalar(a, b interface{}) bool {
	fa, aNum := number(a)
	fb, bNum := number(b)
	if aNum && bNum {
		return fa == fb
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

func number(v interface{}) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

package playground

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// seedManagedFields gives an object about to be seeded (written to storage without the API) the managedFields
// its create would have given it: the create's field manager, upstream's (managedfields), run as the engine's
// create runs it, on an empty live object, for the user agent's manager. Without them, the first update of a
// seeded object would record only the fields it changed, where a real server's object would show its
// creator owning the rest. The field manager's types come from the CRD's OpenAPI v3 documents, which the
// engine serves and builds as kube-apiserver builds its server-side apply models. body is the object as it
// would have been sent (in its own version o.ver); the managedFields are set in stored.
func (ev *evaluation) seedManagedFields(o *object, body, stored map[string]interface{}) {
	fm := ev.seedFieldManager(o.crd, o.ver)
	if fm == nil {
		return
	}
	// The object as the API decodes a body (int64 and float64, not json.Number, which the field manager's
	// types do not take).
	data, err := json.Marshal(body)
	if err != nil {
		return
	}
	in := &unstructured.Unstructured{}
	if err := in.UnmarshalJSON(data); err != nil {
		return
	}
	gvk := schema.GroupVersionKind{Group: o.crd.group, Version: o.ver, Kind: o.crd.kind}
	in.SetGroupVersionKind(gvk)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	out, ok := fm.UpdateNoErrors(live, in, managerOf(ev.s.userAgent)).(*unstructured.Unstructured)
	if !ok {
		return
	}
	if mf, found, _ := unstructured.NestedFieldNoCopy(out.Object, "metadata", "managedFields"); found {
		if md, _ := stored["metadata"].(map[string]interface{}); md != nil {
			md["managedFields"] = mf
		}
	}
}

// seedFieldManager is the create field manager of a CRD's version, built on first use; nil when the engine's
// OpenAPI document for the version cannot be read.
func (ev *evaluation) seedFieldManager(c *installed, version string) *managedfields.FieldManager {
	if fm, ok := c.seeders[version]; ok {
		return fm
	}
	if c.seeders == nil {
		c.seeders = map[string]*managedfields.FieldManager{}
	}
	c.seeders[version] = nil
	models := map[string]*spec.Schema{}
	for _, v := range c.served {
		r := ev.do(http.MethodGet, "/openapi/v3/apis/"+c.group+"/"+v, "", "application/json", nil)
		var doc struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &doc) != nil {
			return nil
		}
		for name, s := range doc.Components.Schemas {
			models[name] = s
		}
	}
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil
	}
	gv := schema.GroupVersion{Group: c.group, Version: version}
	// A main-resource write leaves status to /status where the version has it (the strategy's reset fields).
	reset := map[fieldpath.APIVersion]*fieldpath.Set{}
	if c.statusSub[version] {
		reset[fieldpath.APIVersion(gv.String())] = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	}
	fm, err := managedfields.NewDefaultCRDFieldManager(tc, versionSetter{}, noDefaults{}, unstructuredNew{}, gv.WithKind(c.kind), gv, "", fieldpath.NewExcludeFilterSetMap(reset))
	if err != nil {
		return nil
	}
	c.seeders[version] = fm
	return fm
}

// managerOf names the managedFields manager of a request without fieldManager, as the API server does: the
// user agent up to its first '/', made printable and capped at 128 bytes.
func managerOf(userAgent string) string {
	m := []rune(strings.Split(userAgent, "/")[0])
	for i, r := range m {
		if !unicode.IsPrint(r) {
			m[i] = utf8.RuneError
		}
	}
	s := string(m)
	for len(s) > 128 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// versionSetter converts a custom resource between versions as a CRD with conversion None does: by its
// apiVersion alone. The seed's field manager only converts the object to its own version (seeds need
// conversion None, or the storage version).
type versionSetter struct{}

func (versionSetter) Convert(in, out, context interface{}) error {
	u, ok1 := in.(*unstructured.Unstructured)
	o, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return runtime.NewNotRegisteredErrForType("unstructured", nil)
	}
	o.Object = u.DeepCopy().Object
	return nil
}

func (versionSetter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, runtime.NewNotRegisteredErrForType("unstructured", nil)
	}
	out := u.DeepCopy()
	if gvk, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()}); ok {
		out.SetGroupVersionKind(gvk)
	}
	return out, nil
}

func (versionSetter) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// noDefaults is the field manager's defaulter: it is used only for server-side apply, which a seed is not.
type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// unstructuredNew creates the empty objects the field manager asks for.
type unstructuredNew struct{}

func (unstructuredNew) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

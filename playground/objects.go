package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/yaml"

	"crdplay/playground/internal/marks"
	"crdplay/playground/internal/yamlpos"
)

// evaluation is one Evaluate call's objects phase.
type evaluation struct {
	ctx   context.Context
	s     *Session
	st    *crdState
	in    Input
	res   *Result
	trace *[]Exchange
	// engineTime and parseTime add up the time spent in the engine's handler and in parsing the object texts, for
	// Timings.
	engineTime, parseTime time.Duration
	// skipAnalysis leaves out the installed CRDs' cost reports and explain trees, and skipRuntime their
	// runtime cost models: ModeUpgrade shows neither for the old CRD, nor objects' CEL costs.
	skipAnalysis, skipRuntime bool
	// deferAnalysis leaves the CRDs' analysis (all that skipAnalysis leaves out, and the runtime cost models)
	// in crdState.pending, for analysePending: set by an install with Input.DeferAnalysis.
	deferAnalysis bool
	// cluster reads CRD documents as a cluster holds them (clusterCRD): ModeUpgrade's old CRDs.
	cluster bool
}

// object is one object document on its way through the evaluation.
type object struct {
	src Source
	doc *yamlpos.Doc
	// item is 1 + the object's index in the items of a List document (doc is then the item's node); 0 for a
	// document that is the object.
	item int
	obj  map[string]interface{} // the document as JSON; nil when it is not an object
	// json is the document (not a List's item) converted to JSON as the API's YAML decoder converts it.
	json []byte
	crd  *installed
	// policy is the resource of an admission policy or binding the engine holds (policyResource); crd is
	// then nil.
	policy string
	ver    string
	ns     string
	res    *ObjectResult
	live   map[string]interface{} // the object as the API holds it after the operation; nil if none
	rv     string
	// liveBody is the answer live was read from, in version ver: the object as a GET in that version
	// returns it, so finish need not ask again (each request makes the engine read the CRD).
	liveBody []byte
	// liveWarnings are the warnings a GET of live in ver carries.
	liveWarnings []string
	// clientJSON sends the document as its JSON whatever its keys (Input.ClientJSON).
	clientJSON bool
	// recorded are the diagnostics record placed for the object's answers, so that what two answers both say
	// (a create's and the /status PUT's warning about the same field of the same text) is said once.
	recorded map[string]bool
}

func (o *object) key() string {
	return o.crd.group + "/" + o.crd.kind + "/" + o.ns + "/" + o.res.Name
}

// run evaluates the objects (and old objects) in the input's mode.
func (ev *evaluation) run() {
	var olds []*object
	if ev.in.Mode == ModeUpdate || ev.in.Mode == ModeStatus {
		olds = ev.parse(SourceOldObjects, ev.in.OldObjects)
	}
	news := ev.parse(SourceObjects, ev.in.Objects)
	// Admission policies and bindings first, whatever their place: a cluster's admission configuration is
	// in place before the writes it governs.
	for _, o := range append(append([]*object{}, olds...), news...) {
		if o.policy != "" {
			ev.applyObjectPolicy(o)
		}
	}

	byKey := map[string]*object{}
	for _, o := range olds {
		if o.crd == nil {
			continue
		}
		ev.createOld(o)
		if o.live != nil {
			byKey[o.key()] = o
		}
	}
	for _, n := range news {
		if n.crd == nil {
			continue
		}
		var old *object
		if n.res.Name != "" {
			old = byKey[n.key()]
		}
		switch ev.in.Mode {
		case ModeCreate:
			ev.create(n, "create")
		case ModeUpdate:
			if old == nil {
				ev.noOld(n)
				ev.create(n, "create")
			} else {
				ev.put(n, old, "")
			}
		case ModeStatus:
			if old == nil {
				if !ev.create(n, "create") {
					break
				}
				old = &object{live: n.live, rv: n.rv, ver: n.ver}
			}
			ev.put(n, old, "status")
		case ModeScale:
			if ev.create(n, "create") {
				ev.scale(n)
			}
		case ModeDelete:
			if ev.create(n, "create") {
				ev.delete(n)
			}
		}
		ev.finish(n, old)
	}
	for _, o := range olds {
		if o.crd != nil {
			ev.finish(o, nil)
		}
	}
	ev.tables(append(olds, news...))
	ev.res.OldObjects = results(olds)
	ev.res.Objects = results(news)
}

func results(objs []*object) []ObjectResult {
	out := make([]ObjectResult, 0, len(objs))
	for _, o := range objs {
		out = append(out, *o.res)
	}
	return out
}

// parse splits a text into object documents and finds the CRD that serves each, as kubectl's REST mapping
// would.
func (ev *evaluation) parse(src Source, text string) []*object {
	defer func(start time.Time) { ev.parseTime += time.Since(start) }(time.Now())
	if len(text) > maxText {
		ev.diag(Diagnostic{Source: src, Type: "TooLarge", Severity: SeverityError,
			Message: fmt.Sprintf("the text is %d bytes; the playground takes at most %d", len(text), maxText),
			Span:    yamlpos.Span{Line: 1, Column: 1, EndLine: 1, EndColumn: 2}, Exact: true})
		return nil
	}
	docs, sepErrs := yamlpos.Split(text)
	for _, e := range sepErrs {
		ev.diag(Diagnostic{Source: src, Document: -1, Type: "YAMLSyntax", Message: e.Message, Severity: SeverityError, Span: e.Span, Exact: true})
	}
	var out []*object
	for _, d := range docs {
		newObject := func(d *yamlpos.Doc, item int) *object {
			o := &object{src: src, doc: d, item: item, clientJSON: ev.in.ClientJSON, res: &ObjectResult{Source: src, Document: d.Index, Item: item, StartLine: d.StartLine, EndLine: d.EndLine,
				Warnings: []string{}, Marks: []Mark{}, Versions: []VersionView{}}}
			out = append(out, o)
			return o
		}
		o := newObject(d, 0)
		if d.Err != nil {
			ev.objectDiag(o, Diagnostic{Type: "YAMLSyntax", Message: d.Err.Message, Severity: SeverityError, Span: d.Err.Span, Exact: true})
			continue
		}
		j, err := yaml.YAMLToJSON([]byte(d.Source))
		if err != nil {
			// What go-yaml v2 (the API's decoder, and kubectl's) refuses and v3 reads: at its line or value.
			ps := decodingDiagnostics(d, err.Error(), docLocator(d))
			if len(ps) == 0 {
				ev.fail(o, "YAMLSyntax", err.Error(), "")
			}
			for _, p := range ps {
				dg := Diagnostic{Field: p.field, Type: "YAMLSyntax", Message: p.message, Severity: SeverityError, Span: p.at.Span, Exact: p.at.Exact}
				if dg.Message != err.Error() {
					dg.Detail = err.Error()
				}
				ev.objectDiag(o, dg)
			}
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		var v interface{}
		if err := dec.Decode(&v); err != nil {
			ev.fail(o, "YAMLSyntax", err.Error(), "")
			continue
		}
		m, ok := v.(map[string]interface{})
		if !ok {
			ev.fail(o, "NotAnObject", fmt.Sprintf("a Kubernetes object is a mapping with apiVersion, kind and metadata; this document is %s", jsonKind(v)), "")
			continue
		}
		items, isList := m["items"].([]interface{})
		apiVersion, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		if isList && strings.HasSuffix(kind, "List") {
			if c, _, _ := ev.servedBy(apiVersion, kind); c != nil {
				isList = false // a served kind is sent as it is
			}
		}
		if !isList {
			o.json = j
			ev.identify(o, m)
			continue
		}
		// A List (kind List, or CronTabList...) stands for its items, as kubectl create -f and apply -f flatten
		// it; a served kind is sent as it is even when it has items.
		if len(items) == 0 {
			o.res.APIVersion, o.res.Kind = apiVersion, kind
			ev.objectDiag(o, Diagnostic{Field: "items", Type: "NoItems", Severity: SeverityWarning,
				Message: "the List has no items: kubectl create -f sends nothing for it", Span: d.Locate("items").Span, Exact: true})
			continue
		}
		out = out[:len(out)-1] // the List itself is not sent: its items are
		for i, it := range items {
			sub := d.Sub([]yamlpos.Seg{yamlpos.K("items"), yamlpos.I(i)})
			if sub == nil {
				sub = d // an item that came from a merge key or an alias: placed at the List
			}
			o := newObject(sub, i+1)
			im, ok := it.(map[string]interface{})
			if !ok {
				ev.fail(o, "NotAnObject", fmt.Sprintf("a Kubernetes object is a mapping with apiVersion, kind and metadata; items[%d] is %s", i, jsonKind(it)), "")
				continue
			}
			ev.identify(o, im)
		}
	}
	return out
}

// fail places a problem that keeps an object document from being sent: at field, or at the document's start.
func (ev *evaluation) fail(o *object, typ, msg, field string) {
	p := yamlpos.Result{Span: o.doc.Start(), Exact: true}
	if field != "" {
		p = o.doc.Locate(field)
	}
	ev.objectDiag(o, Diagnostic{Field: field, Type: typ, Message: msg, Severity: SeverityError, Span: p.Span, Exact: p.Exact})
}

// objectDiag adds a diagnostic of o's: in its editor, document and List item.
func (ev *evaluation) objectDiag(o *object, d Diagnostic) {
	d.Source, d.Document, d.Item = o.src, o.doc.Index, o.item
	ev.diag(d)
}

// servedBy returns the CRD of the session that serves apiVersion and kind (nil if none), and the parsed group
// version.
func (ev *evaluation) servedBy(apiVersion, kind string) (*installed, schema.GroupVersion, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, gv, err
	}
	return ev.st.served[gvk{gv.Group, gv.Version, kind}], gv, nil
}

// identify takes m as o's object and finds the CRD that serves it, as kubectl's REST mapping would, or says
// why the object cannot be sent.
func (ev *evaluation) identify(o *object, m map[string]interface{}) {
	o.obj = m
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	md, _ := m["metadata"].(map[string]interface{})
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	o.res.APIVersion, o.res.Kind, o.res.Name = apiVersion, kind, name
	// kubectl's own words for objects it cannot send.
	switch {
	case apiVersion == "" && kind == "":
		ev.fail(o, "MissingKind", "apiVersion not set, kind not set", "")
		return
	case apiVersion == "":
		ev.fail(o, "MissingKind", "apiVersion not set", "")
		return
	case kind == "":
		ev.fail(o, "MissingKind", "kind not set", "")
		return
	case kind == "CustomResourceDefinition":
		ev.fail(o, "NoKindMatch", "CustomResourceDefinitions belong in the CRD editor", "kind")
		return
	}
	c, gv, err := ev.servedBy(apiVersion, kind)
	if err != nil {
		ev.fail(o, "NoKindMatch", err.Error(), "apiVersion")
		return
	}
	if res := policyResource(apiVersion, kind); c == nil && res != "" && ev.s.appliesPolicies() {
		o.policy = res // written before the objects it may apply to (run)
		return
	}
	if c == nil && admissionKind(apiVersion, kind) {
		ev.objectDiag(o, notApplied(fmt.Sprintf("%s (%s)", kind, apiVersion), o.doc.Start()))
		return
	}
	if c == nil && builtinGroup(gv.Group) {
		// A Deployment, Namespace or RBAC object beside the custom resources (an operator's bundle, a
		// chart's output): not the playground's to check, and no reason to check nothing.
		ev.objectDiag(o, Diagnostic{Type: "NotChecked", Severity: SeverityInfo, Span: o.doc.Start(), Exact: true,
			Message: fmt.Sprintf("not checked: %s (%s) is a built-in Kubernetes kind; the playground checks custom resources", kind, apiVersion)})
		return
	}
	if c == nil {
		ev.fail(o, "NoKindMatch", (&meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: gv.Group, Kind: kind}, SearchedVersions: []string{gv.Version}}).Error()+
			" (is its CRD in the CRD editor, accepted and serving that version?)", "kind")
		return
	}
	o.crd, o.ver = c, gv.Version
	if c.namespaced {
		o.ns = ns
		if o.ns == "" {
			o.ns = ev.in.Namespace
		}
	}
	o.res.Namespace = o.ns
}

// body is what a create sends: the document as it is written (YAML), so that the API's YAML errors are its
// own, or the same as JSON (as kubectl sends it) when the API reads the YAML the same way: its YAML decoder
// converts the text with the same function as parse did, then parses it again strictly only to find duplicate
// keys, which plainKeys rules out (see crdJSON). That saves the engine both parses, a tenth of an object
// edit's time; TestObjectSentAsJSON compares the answers with the API's to the YAML. For an item of a List,
// body is the item as JSON (what kubectl sends for each item it takes from a List).
func (o *object) body() (contentType string, data []byte) {
	if o.item == 0 {
		if o.json != nil && len(o.json) < maxRequestBytes && (o.clientJSON || readsAsItsJSON(o.doc)) {
			return "application/json", o.json
		}
		return "application/yaml", []byte(o.doc.Source)
	}
	data, _ = json.Marshal(o.obj) // decoded from JSON, so it encodes
	return "application/json", data
}

func jsonKind(v interface{}) string {
	switch v.(type) {
	case nil:
		return "null"
	case []interface{}:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return "not a mapping"
}

func (ev *evaluation) diag(d Diagnostic) { ev.res.Diagnostics = append(ev.res.Diagnostics, d) }

func (ev *evaluation) query() string {
	if ev.in.FieldValidation == "" {
		return ""
	}
	return "?fieldValidation=" + url.QueryEscape(ev.in.FieldValidation)
}

// record stores a write's answer as the object's main result and places its problems.
func (ev *evaluation) record(o *object, op, method, path string, r *response, sev Severity) {
	o.res.Operation, o.res.Method, o.res.Path = op, method, path
	o.res.Status = r.status
	o.res.Accepted = r.status >= 200 && r.status < 300
	o.res.Response = rawJSON(r.body)
	o.res.Warnings = r.warnings
	loc := docLocator(o.doc)
	deprecated := func(w string) bool { return o.crd.deprecated[o.ver] && strings.Contains(w, " is deprecated") }
	for _, d := range warningDiagnostics(o.src, o.doc, r.warnings, loc, deprecated) {
		ev.recordDiag(o, d)
	}
	if !o.res.Accepted {
		for _, d := range statusDiagnostics(o.src, o.doc, r, sev, loc) {
			// The rules the API did not check are said where they apply (a note of the error that blocked
			// them; alone, a diagnostic there).
			if d.Field == "<nil>" && strings.Contains(d.Message, rulesNotChecked) {
				if sp, ok := o.ruleSpan(); ok {
					d.Span = sp
				}
				d.Exact = false
			}
			for i, n := range d.Notes {
				if n.Field == "<nil>" && strings.Contains(n.Message, rulesNotChecked) {
					if sp, ok := o.ruleSpan(); ok {
						d.Notes[i].Span = &sp
					}
				}
			}
			ev.recordDiag(o, d)
		}
	}
}

// recordDiag adds a diagnostic of one of o's answers, unless an earlier answer of o's had the same one: the
// object written twice (created, then its /status PUT in ModeStatus without an old object) gets the same
// warnings for the same text twice, and it is one problem.
func (ev *evaluation) recordDiag(o *object, d Diagnostic) {
	k := fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s\x00%v", d.Type, d.Severity, d.Field, d.Message, d.Detail, d.Span)
	if o.recorded[k] {
		return
	}
	if o.recorded == nil {
		o.recorded = map[string]bool{}
	}
	o.recorded[k] = true
	ev.objectDiag(o, d)
}

// ruleSpan is where the rules the API did not check apply in o's document: the first field, in the schema's
// order, that has rules and is in the text (a rule on list items at its list). ok is false for rules on the
// root only, or on fields the text lacks.
func (o *object) ruleSpan() (yamlpos.Span, bool) {
	for _, self := range o.crd.ruleFields[o.ver] {
		if i := strings.Index(self, "[*]"); i >= 0 {
			self = self[:i]
		}
		if self == "" {
			continue
		}
		if r := o.doc.Locate(self); r.Exact {
			return r.Span, true
		}
	}
	return yamlpos.Span{}, false
}

// adopt makes a successful answer's object the live one. A GET's warnings are what a GET in the object's
// version carries; a write's include others (unknown fields...), of which only the version's deprecation
// would come with a GET.
func (o *object) adopt(r *response, get bool) {
	body := r.body
	var m map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return
	}
	o.live, o.liveBody = m, body
	o.liveWarnings = []string{}
	for _, w := range r.warnings {
		if get || (o.crd != nil && o.crd.deprecated[o.ver] && strings.Contains(w, " is deprecated")) {
			o.liveWarnings = append(o.liveWarnings, w)
		}
	}
	md, _ := m["metadata"].(map[string]interface{})
	o.rv, _ = md["resourceVersion"].(string)
	if n, _ := md["name"].(string); n != "" {
		o.res.Name = n
	}
}

// create POSTs the object: its document as it is written (YAML), as `kubectl create --raw` would send it, or
// a List's item as JSON (see body).
func (ev *evaluation) create(o *object, op string) bool {
	path := o.crd.path(o.ver, o.ns, "") + ev.query()
	ct, body := o.body()
	r := ev.do(http.MethodPost, path, ct, "application/json", body)
	ev.record(o, op, http.MethodPost, path, r, SeverityError)
	if o.res.Accepted {
		o.adopt(r, false)
	}
	return o.res.Accepted
}

// createOld creates an old object; one the API refuses under the current CRD is written to storage directly,
// as if it had been created under an earlier, looser version of the CRD, so that the update can show
// ratcheting. Its refusal is shown as information.
func (ev *evaluation) createOld(o *object) {
	path := o.crd.path(o.ver, o.ns, "")
	ct, body := o.body()
	r := ev.do(http.MethodPost, path, ct, "application/json", body)
	if r.status >= 200 && r.status < 300 {
		ev.record(o, "create", http.MethodPost, path, r, SeverityError)
		o.adopt(r, false)
		return
	}
	ev.record(o, "create", http.MethodPost, path, r, SeverityInfo)
	if reason := ev.seed(o); reason != "" {
		ev.objectDiag(o, Diagnostic{Type: "NotSeeded", Severity: SeverityError,
			Message: "the old object is refused by this CRD and could not be stored as an earlier CRD would have: " + reason,
			Span:    o.doc.Start(), Exact: true})
		return
	}
	o.res.Seeded = true
	ev.objectDiag(o, Diagnostic{Type: "Seeded", Severity: SeverityInfo,
		Message: "this CRD refuses the old object (see the notes); it was stored without validation, as if created under an earlier version of the CRD, so that the update shows ratcheting",
		Span:    o.doc.Start(), Exact: true})
}

// seed writes an old object to storage as the engine would have stored it, and reads it back through the API.
func (ev *evaluation) seed(o *object) string {
	c := o.crd
	if o.res.Name == "" {
		return "it has no metadata.name"
	}
	if o.ver != c.storage && !c.conversionNone {
		return "it is not in the storage version " + c.storage + " and the CRD converts with a webhook"
	}
	key := ev.st.store.objectKey(c.group, c.plural, o.ns, o.res.Name)
	if key == "" {
		return "the engine's storage layout is unknown"
	}
	stored := deepCopyMap(o.obj)
	stored["apiVersion"] = c.group + "/" + c.storage
	md, _ := stored["metadata"].(map[string]interface{})
	if md == nil {
		md = map[string]interface{}{}
		stored["metadata"] = md
	}
	delete(md, "resourceVersion")
	delete(md, "managedFields")
	delete(md, "deletionTimestamp")
	sent := deepCopyMap(stored)
	sent["apiVersion"] = c.group + "/" + o.ver
	ev.seedManagedFields(o, sent, stored)
	md["uid"] = string(uuid.NewUUID())
	md["creationTimestamp"] = ev.now().UTC().Format(time.RFC3339)
	md["generation"] = 1
	if c.namespaced {
		md["namespace"] = o.ns
	} else {
		delete(md, "namespace")
	}
	if c.statusSub[c.storage] {
		// Created through the main resource, it would have had no status.
		delete(stored, "status")
	}
	data, err := json.Marshal(stored)
	if err != nil {
		return err.Error()
	}
	if _, err := ev.st.store.Create(ev.ctx, key, data); err != nil {
		return err.Error()
	}
	path := c.path(o.ver, o.ns, o.res.Name)
	g := ev.do(http.MethodGet, path, "", "application/json", nil)
	if g.status != http.StatusOK {
		return fmt.Sprintf("reading it back: HTTP %d %s", g.status, string(g.body))
	}
	o.adopt(g, true)
	return ""
}

func (ev *evaluation) now() time.Time {
	if ev.s.opts.Now != nil {
		return ev.s.opts.Now()
	}
	return time.Now()
}

func (ev *evaluation) noOld(o *object) {
	ev.objectDiag(o, Diagnostic{Field: "metadata.name", Type: "NoOldObject", Severity: SeverityInfo,
		Message: fmt.Sprintf("no old object %s %q: this one is created instead", o.crd.kind, o.res.Name),
		Span:    o.doc.Locate("metadata.name").Span, Exact: true})
}

// defaultResourceVersion gives obj the resourceVersion rv unless its metadata names one, as kubectl replace
// sends the object it read's version with an edited object that has none.
func defaultResourceVersion(obj map[string]interface{}, rv string) {
	md, _ := obj["metadata"].(map[string]interface{})
	if md == nil {
		md = map[string]interface{}{}
		obj["metadata"] = md
	}
	if v, _ := md["resourceVersion"].(string); v == "" {
		md["resourceVersion"] = rv
	}
}

// put replaces old with the document (sub "" or "status"), with old's resourceVersion unless the document
// has one, as `kubectl replace` sends an object: JSON.
func (ev *evaluation) put(o, old *object, sub string) {
	body := deepCopyMap(o.obj)
	defaultResourceVersion(body, old.rv)
	data, _ := json.Marshal(body)
	path := o.crd.path(o.ver, o.ns, o.res.Name)
	op := "update"
	if sub != "" {
		path += "/" + sub
		op = sub
	}
	path += ev.query()
	r := ev.do(http.MethodPut, path, "application/json", "application/json", data)
	o.live, o.liveBody = nil, nil
	ev.record(o, op, http.MethodPut, path, r, SeverityError)
	if o.res.Accepted {
		o.adopt(r, false)
	} else {
		// The old object is still what the API holds.
		o.live, o.rv = old.live, old.rv
		if old.ver == o.ver {
			o.liveBody, o.liveWarnings = old.liveBody, old.liveWarnings
		}
	}
}

// scale reads /scale, or writes Input.Replicas to it as `kubectl scale` does; the stored object is read
// back afterwards.
func (ev *evaluation) scale(o *object) {
	path := o.crd.path(o.ver, o.ns, o.res.Name) + "/scale"
	var r *response
	if ev.in.Replicas == nil {
		r = ev.do(http.MethodGet, path, "", "application/json", nil)
		ev.record(o, "scale", http.MethodGet, path, r, SeverityError)
	} else {
		scale := map[string]interface{}{
			"apiVersion": "autoscaling/v1", "kind": "Scale",
			"metadata": map[string]interface{}{"name": o.res.Name, "namespace": o.ns, "resourceVersion": o.rv},
			"spec":     map[string]interface{}{"replicas": *ev.in.Replicas},
		}
		data, _ := json.Marshal(scale)
		r = ev.do(http.MethodPut, path, "application/json", "application/json", data)
		ev.record(o, "scale", http.MethodPut, path, r, SeverityError)
	}
	ev.reread(o)
}

// delete DELETEs the object; with finalizers it stays, with a deletionTimestamp.
func (ev *evaluation) delete(o *object) {
	path := o.crd.path(o.ver, o.ns, o.res.Name)
	r := ev.do(http.MethodDelete, path, "", "application/json", nil)
	ev.record(o, "delete", http.MethodDelete, path, r, SeverityError)
	ev.reread(o)
	o.res.Deleted = o.live == nil
}

// reread makes the live object what a GET returns now.
func (ev *evaluation) reread(o *object) {
	g := ev.do(http.MethodGet, o.crd.path(o.ver, o.ns, o.res.Name), "", "application/json", nil)
	o.live, o.liveBody = nil, nil
	if g.status == http.StatusOK {
		o.adopt(g, true)
	}
}

// finish fills what follows from the live object: the stored object and its YAML, the marks against the
// text, the object in every served version, and the CEL runtime cost.
func (ev *evaluation) finish(o, old *object) {
	if o.crd == nil {
		return
	}
	if rt := o.crd.runtimeFor(o.ver); rt != nil && o.obj != nil {
		var oldObj map[string]interface{}
		if old != nil && old.ver == o.ver && old.live != nil {
			oldObj = old.live
		}
		o.res.CEL = &RuntimeCost{Used: rt.Cost(ev.ctx, o.obj, oldObj), Budget: ev.res.Limits.RuntimeBudget}
	}
	if o.live == nil {
		return
	}
	if o.liveBody != nil {
		o.res.Stored = rawJSON(o.liveBody)
	} else {
		o.res.Stored, _ = json.Marshal(o.live)
	}
	var storedDoc *yamlpos.Doc
	if y, err := kubectlYAML(o.live); err == nil {
		o.res.StoredYAML = y
		if docs, _ := yamlpos.Split(y); len(docs) == 1 {
			storedDoc = docs[0]
		}
	}
	if o.obj != nil {
		opts := marks.Options{
			StatusIgnored: o.res.Operation != "status" && o.crd.statusSub[o.ver],
			StatusOnly:    o.res.Operation == "status",
		}
		for _, m := range marks.Diff(o.obj, o.live, opts) {
			if strings.HasPrefix(m.Path, "metadata.managedFields") {
				continue // not in the YAML shown
			}
			if r := o.doc.LocateSegs(m.Segs); r.Exact {
				sp := r.Span
				m.Input = &sp
			}
			if storedDoc != nil {
				if r := storedDoc.LocateSegs(m.Segs); r.Exact {
					sp := r.Span
					m.Stored = &sp
				}
			}
			o.res.Marks = append(o.res.Marks, m)
		}
	}
	for _, v := range o.crd.served {
		var g *response
		if v == o.ver && o.liveBody != nil {
			// The write (or read) that produced live answered in this version already.
			g = &response{status: http.StatusOK, body: o.liveBody, warnings: o.liveWarnings}
		} else {
			g = ev.do(http.MethodGet, o.crd.path(v, o.ns, o.res.Name), "", "application/json", nil)
		}
		view := VersionView{Version: v, Status: g.status, Object: rawJSON(g.body), Warnings: g.warnings}
		if g.status == http.StatusOK && v == o.ver && bytes.Equal(g.body, o.liveBody) && o.res.StoredYAML != "" {
			view.YAML = o.res.StoredYAML
		} else if g.status == http.StatusOK {
			var m map[string]interface{}
			dec := json.NewDecoder(bytes.NewReader(g.body))
			dec.UseNumber()
			if dec.Decode(&m) == nil {
				view.YAML, _ = kubectlYAML(m)
			}
		} else if st, ok := parseStatus(g.body); ok {
			view.Error = st.Message
		}
		o.res.Versions = append(o.res.Versions, view)
	}
}

// tables lists each CRD that has objects as `kubectl get -A` does, in its preferred version, unless the input
// skips them.
func (ev *evaluation) tables(objs []*object) {
	if ev.in.SkipTables {
		return
	}
	ev.res.Tables = []Table{}
	seen := map[*installed]bool{}
	for _, o := range objs {
		if o.crd == nil || o.live == nil || seen[o.crd] {
			continue
		}
		c := o.crd
		seen[c] = true
		path := c.path(c.preferred, "", "")
		r := ev.do(http.MethodGet, path, "", "application/json;as=Table;v=v1;g=meta.k8s.io", nil)
		t := Table{CRD: c.name, Version: c.preferred, Path: path, Status: r.status, Columns: []TableColumn{}, Rows: []TableRow{}}
		if r.status != http.StatusOK {
			if st, ok := parseStatus(r.body); ok {
				t.Error = st.Message
			}
			ev.res.Tables = append(ev.res.Tables, t)
			continue
		}
		var table struct {
			ColumnDefinitions []TableColumn `json:"columnDefinitions"`
			Rows              []struct {
				Cells  []json.RawMessage `json:"cells"`
				Object struct {
					Metadata struct {
						Name      string `json:"name"`
						Namespace string `json:"namespace"`
					} `json:"metadata"`
				} `json:"object"`
			} `json:"rows"`
		}
		if err := json.Unmarshal(r.body, &table); err != nil {
			t.Error = err.Error()
		}
		for _, col := range table.ColumnDefinitions {
			col.Wide = col.Priority > 0
			t.Columns = append(t.Columns, col)
		}
		for _, row := range table.Rows {
			cells := row.Cells
			if cells == nil {
				cells = []json.RawMessage{}
			}
			t.Rows = append(t.Rows, TableRow{Namespace: row.Object.Metadata.Namespace, Name: row.Object.Metadata.Name, Cells: cells})
		}
		ev.res.Tables = append(ev.res.Tables, t)
	}
}

// kubectlYAML prints an object as `kubectl get -o yaml` does: keys sorted, managedFields hidden. kubectl
// prints with sigs.k8s.io/yaml.Marshal: the object encoded as JSON, read back by go-yaml v2 (which picks each
// number's type from its text) and printed by go-yaml v2. obj holds JSON's values already, so it goes to
// go-yaml's printer directly, each number replaced by what go-yaml reads from its JSON text: the same YAML
// without encoding the object and parsing it again, which was a fifth of an object edit's allocations.
// TestKubectlYAML and FuzzKubectlYAML compare it with kubectl's way.
func kubectlYAML(obj map[string]interface{}) (string, error) {
	o := obj
	if md, ok := obj["metadata"].(map[string]interface{}); ok {
		if _, has := md["managedFields"]; has {
			o = make(map[string]interface{}, len(obj))
			for k, v := range obj {
				o[k] = v
			}
			m2 := make(map[string]interface{}, len(md))
			for k, v := range md {
				if k != "managedFields" {
					m2[k] = v
				}
			}
			o["metadata"] = m2
		}
	}
	v, _, err := yamlScalars(o)
	if err != nil {
		return "", err
	}
	y, err := yamlv2.Marshal(v)
	return string(y), err
}

// yamlScalars returns v with each scalar that go-yaml would not read back from JSON as the same Go value (a
// number: json.Number, float64; a string or map key that is not yamlReadable) replaced by what go-yaml
// reads from its JSON encoding (or its error). Maps and lists are copied only when they hold one.
func yamlScalars(v interface{}) (out interface{}, changed bool, err error) {
	switch t := v.(type) {
	case nil, bool:
		return v, false, nil
	case string:
		if yamlReadable(t) {
			return v, false, nil
		}
	case map[string]interface{}:
		var m map[string]interface{}
		for k, x := range t {
			// go-yaml's scanner looks for a key's colon within 1024 characters of its start: a key
			// that long in JSON (escapes count) fails kubectl's printer.
			if len(k) > 128 || !yamlReadable(k) {
				return viaJSON(v)
			}
			y, ch, err := yamlScalars(x)
			if err != nil {
				return nil, false, err
			}
			if ch && m == nil {
				m = make(map[string]interface{}, len(t))
				for k2, x2 := range t {
					m[k2] = x2
				}
			}
			if ch {
				m[k] = y
			}
		}
		if m == nil {
			return v, false, nil
		}
		return m, true, nil
	case []interface{}:
		var l []interface{}
		for i, x := range t {
			y, ch, err := yamlScalars(x)
			if err != nil {
				return nil, false, err
			}
			if ch && l == nil {
				l = append([]interface{}(nil), t...)
			}
			if ch {
				l[i] = y
			}
		}
		if l == nil {
			return v, false, nil
		}
		return l, true, nil
	}
	return viaJSON(v)
}

// yamlReadable reports whether go-yaml reads s back from its JSON encoding as s: it is UTF-8 (JSON replaces
// what is not with U+FFFD) and has only characters that go-yaml's reader allows as they are, or that JSON
// escapes (those below U+0020, U+2028 and U+2029). Of the others, go-yaml reads U+0085 as a line break (and
// folds it), and refuses the rest (U+007F to U+009F, U+FFFE, U+FFFF): kubectl's printer then fails.
func yamlReadable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x7f {
			return yamlReadableRunes(s[i:])
		}
	}
	return true
}

func yamlReadableRunes(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r < 0x7f, r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000:
		default:
			return false
		}
	}
	return true
}

// viaJSON is what go-yaml reads from v's JSON encoding.
func viaJSON(v interface{}) (out interface{}, changed bool, err error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, false, err
	}
	var y interface{}
	if err := yamlv2.Unmarshal(j, &y); err != nil {
		return nil, false, err
	}
	return y, true, nil
}

// rawJSON returns a body as JSON to embed: itself when it is JSON, else a JSON string.
func rawJSON(body []byte) json.RawMessage {
	if len(body) == 0 {
		return nil
	}
	if json.Valid(body) {
		return json.RawMessage(bytes.TrimSpace(body))
	}
	s, _ := json.Marshal(string(body))
	return s
}

func deepCopyMap(m map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		return deepCopyMap(t)
	case []interface{}:
		out := make([]interface{}, len(t))
		for i := range t {
			out[i] = deepCopyValue(t[i])
		}
		return out
	}
	return v
}

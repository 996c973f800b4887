package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"crdplay/playground/internal/yamlpos"
)

// upgrade runs ModeUpgrade. It needs an engine of its own: the new CRDs replace the old ones in it, which no
// rollback undoes, so the session's installed CRDs (those of the other modes) are left as they are.
//
// The cluster is built as one that followed the releases would be: the first text (Input.History's first, or
// OldCRDs alone) is created, each later one applied over it in turn, and the stored versions the last texts
// carry (or Input.StoredVersions names) written through /status; then the objects are stored, and the new
// CRDs applied: each paired by name with an old one is PUT over it, the others POSTed.
func (s *Session) upgrade(ctx context.Context, in Input, oldText, newText string, res *Result, trace *[]Exchange) error {
	start := time.Now()
	var engineTime time.Duration
	texts := append(append([]string(nil), in.History...), oldText)
	st, stored, err := s.installLean(ctx, texts[0], trace, &engineTime, true, false)
	if err != nil {
		return err
	}
	if len(texts) > 1 {
		// An earlier release is applied as kubectl apply applies it: a status in its files (controller-gen
		// writes an empty one) is not the cluster's. Only the last old text is the cluster's state.
		stored = nil
	}
	src, text := oldSource(len(texts), 0)
	for _, d := range st.diags {
		d.Source, d.Text = src, text
		res.Diagnostics = append(res.Diagnostics, d)
	}
	st.diags = nil
	res.Timings.CRDs, res.Timings.CRDEngine = ms(time.Since(start)), ms(engineTime)
	res.CRDRevision = revisionOf(string(ModeUpgrade) + "\x00" + strings.Join(texts, "\x00") + "\x00" + newText)
	res.SchemasOmitted = in.KnownCRDRevision != "" && in.KnownCRDRevision == res.CRDRevision

	objStart := time.Now()
	ev := &evaluation{ctx: ctx, s: s, st: st, in: in, res: res, trace: trace, skipRuntime: true}
	u := &upgrader{ev: ev, texts: texts, newText: newText}
	u.run(stored)
	res.Timings.Objects = ms(time.Since(objStart))
	res.Timings.ObjectEngine, res.Timings.Parse = ms(ev.engineTime), ms(ev.parseTime)
	return nil
}

// oldSource is where the i-th of n old texts (Input.History, then OldCRDs) places its diagnostics.
func oldSource(n, i int) (Source, int) {
	if i == n-1 {
		return SourceOldCRDs, 0
	}
	return SourceHistory, i
}

// upgrader is one ModeUpgrade evaluation past the first old text's install.
type upgrader struct {
	ev *evaluation
	// texts are the old CRD texts in the order applied (Input.History, then OldCRDs); newText the new one.
	texts   []string
	newText string
	rep     *UpgradeReport
	// olds are the CRDs the cluster holds before the upgrade, by name, and their names in the order first met.
	olds     map[string]*oldCRD
	oldOrder []string
	// pairs are the new CRDs with the old ones of the same name, in the new text's order, then the old CRDs
	// the new text does not have.
	pairs []*pair
	// stored are the objects stored under the old CRDs, with their report entries (same order).
	stored  []*object
	entries map[*object]*UpgradeObject
	// before are the stored objects as the old CRD served them, by object.
	before map[*object]map[string]interface{}
	// written are the answers of the accepted no-op updates, by object and version: what the next write
	// stores.
	written map[*object]map[string]json.RawMessage
	// fresh are the answers to each stored object sent as a new object in each version (a dry-run create),
	// by object and version: what the new schema says of the stored values without ratcheting.
	fresh map[*object]map[string]*response
	// pre are, by object and op ("dryrun", "update", "status"), the causes ("field\x00message") the same
	// dry-run writes met under the old CRD: refusals that existed before the upgrade.
	pre map[*object]map[string]map[string]bool
	// docs are the old texts split, by text index, when something had to be placed in them again.
	docs map[int][]*yamlpos.Doc
}

// oldCRD is a CRD as the cluster holds it before the upgrade.
type oldCRD struct {
	name string
	// text and doc place the CRD's document in the latest old text that has it.
	text, doc int
	line      int
	accepted  bool
	// c is the CRD as it serves objects; nil when it is not established.
	c *installed
	// stored counts its stored objects.
	stored int
}

// pair is one CRD of the upgrade: a new CRD with the old one of its name (updated), a new CRD alone (added),
// or an old one alone (removed).
type pair struct {
	name string
	old  *oldCRD
	doc  *yamlpos.Doc
	// i is the pair's index in the report's CRDs.
	i int
	// oldLive and newLive are the CRD as the API held it before the PUT and after it (nil when refused).
	oldLive, newLive *apiextensionsv1.CustomResourceDefinition
	// newC is the new CRD once the API accepted and established it.
	newC *installed
	// refusal is the new CRD's Status when the API refused it.
	refusal *statusBody
	// stored are the objects of the CRD.
	stored []*object
}

func (u *upgrader) crdReport(p *pair) *UpgradeCRD { return &u.rep.CRDs[p.i] }

// run builds the cluster, stores the objects, applies the new CRDs, checks every stored object against them,
// and places the static findings with their evidence.
func (u *upgrader) run(stored map[string][]string) {
	ev := u.ev
	res := ev.res
	u.rep = &UpgradeReport{CRD: UpgradeCRD{Warnings: []string{}}, CRDs: []UpgradeCRD{}, Objects: []UpgradeObject{}, Findings: []Finding{}}
	res.Upgrade = u.rep
	res.CRDs = []CRDResult{}
	u.olds = map[string]*oldCRD{}
	u.before = map[*object]map[string]interface{}{}
	u.entries = map[*object]*UpgradeObject{}
	u.written = map[*object]map[string]json.RawMessage{}
	u.fresh = map[*object]map[string]*response{}
	u.pre = map[*object]map[string]map[string]bool{}
	u.docs = map[int][]*yamlpos.Doc{}

	for _, r := range ev.st.results {
		u.noteOld(r, 0)
	}
	if stored == nil {
		stored = map[string][]string{}
	}
	for i := 1; i < len(u.texts); i++ {
		u.applyOld(i, stored)
	}
	unparsed := false
	for _, d := range ev.res.Diagnostics {
		unparsed = unparsed || (d.Type == "YAMLSyntax" && (d.Source == SourceOldCRDs || d.Source == SourceHistory))
	}
	if len(u.olds) == 0 && !unparsed {
		msg := "the upgrade check needs the old CRDs: this text is empty"
		if strings.TrimSpace(u.texts[len(u.texts)-1]) != "" {
			msg = "the upgrade check needs the old CRDs: this text holds no CustomResourceDefinition"
		}
		ev.diag(Diagnostic{Source: SourceOldCRDs, Type: "NoCRD", Severity: SeverityError,
			Message: msg, Span: yamlpos.Span{Line: 1, Column: 1, EndLine: 1, EndColumn: 1}, Exact: true})
	}
	for name, vs := range ev.in.StoredVersions {
		stored[name] = vs
	}
	for _, name := range u.oldOrder {
		if vs, ok := stored[name]; ok {
			u.setStoredVersions(name, vs, ev.in.StoredVersions[name] != nil)
		}
	}
	for name := range ev.in.StoredVersions {
		if u.olds[name] == nil {
			ev.diag(Diagnostic{Source: SourceOldCRDs, Type: "StoredVersions", Severity: SeverityError, Span: yamlpos.Span{Line: 1, Column: 1, EndLine: 1, EndColumn: 1},
				Message: fmt.Sprintf("stored versions are given for %s, which no old CRD is", name)})
		}
	}

	objs := ev.parse(SourceObjects, ev.in.Objects)
	for _, o := range objs {
		if o.crd == nil {
			continue
		}
		if u.store(o) {
			ev.finish(o, nil)
			u.before[o] = o.live
			u.stored = append(u.stored, o)
			if old := u.olds[o.crd.name]; old != nil {
				old.stored++
			}
		}
	}
	for _, o := range u.stored {
		u.preCheck(o)
	}

	u.applyNew()
	for _, p := range u.pairs {
		for _, o := range u.stored {
			if p.old != nil && o.crd != nil && o.crd.name == p.name {
				p.stored = append(p.stored, o)
			}
		}
		u.crdReport(p).Objects = len(p.stored)
		if ev.in.Migrate && p.refusal != nil && storedVersionRefusal(p.refusal) {
			u.migrate(p)
		}
	}
	for _, p := range u.pairs {
		for _, o := range p.stored {
			if p.newC != nil {
				u.check(o, p.newC)
				o.crd = p.newC // kubectl get lists it as the new CRD serves it
			}
		}
	}
	for _, o := range u.stored {
		u.rep.Objects = append(u.rep.Objects, *u.entry(o))
	}
	ev.tables(u.stored)
	res.OldObjects = []ObjectResult{}
	res.Objects = results(objs)
	for _, p := range u.pairs {
		u.findings(p)
	}
	if len(u.rep.CRDs) > 0 {
		u.rep.CRD = u.rep.CRDs[0]
	}
	u.verdict()
}

// noteOld records a CRD of the i-th old text as the cluster now holds it.
func (u *upgrader) noteOld(r CRDResult, text int) {
	if r.Name == "" {
		return
	}
	o := u.olds[r.Name]
	if o == nil {
		o = &oldCRD{name: r.Name}
		u.olds[r.Name] = o
		u.oldOrder = append(u.oldOrder, r.Name)
	}
	o.text, o.doc, o.line = text, r.Document, r.StartLine
	if r.Accepted {
		o.accepted = true
	}
	o.c = nil
	for _, c := range u.ev.st.served {
		if c.name == r.Name {
			o.c = c
		}
	}
}

// oldDocs is the i-th old text split into documents (split again when something must be placed in it).
func (u *upgrader) oldDocs(i int) []*yamlpos.Doc {
	if d, ok := u.docs[i]; ok {
		return d
	}
	var docs []*yamlpos.Doc
	if len(u.texts[i]) <= maxText {
		docs, _ = yamlpos.Split(u.texts[i])
		docs = expandLists(docs)
	}
	u.docs[i] = docs
	return docs
}

// oldDoc is the document of an old CRD in its text, or nil.
func (u *upgrader) oldDoc(o *oldCRD) *yamlpos.Doc {
	for _, d := range u.oldDocs(o.text) {
		if d.Index == o.doc && docLine(d) == o.line {
			return d
		}
	}
	return nil
}

// applyOld applies the i-th old text over the cluster as `kubectl apply` of a release would: each CRD the
// cluster has is replaced, the others created. Stored versions the text's CRDs carry replace earlier ones.
func (u *upgrader) applyOld(i int, stored map[string][]string) {
	ev := u.ev
	src, text := oldSource(len(u.texts), i)
	t := u.texts[i]
	if len(t) > maxText {
		ev.diag(Diagnostic{Source: src, Text: text, Type: "TooLarge", Severity: SeverityError,
			Message: fmt.Sprintf("the CRD text is %d bytes; the playground takes at most %d", len(t), maxText),
			Span:    yamlpos.Span{Line: 1, Column: 1, EndLine: 1, EndColumn: 2}, Exact: true})
		return
	}
	docs, sepErrs := yamlpos.Split(t)
	docs = expandLists(docs)
	u.docs[i] = docs
	for _, e := range sepErrs {
		ev.diag(Diagnostic{Source: src, Text: text, Document: -1, Type: "YAMLSyntax", Message: e.Message, Severity: SeverityError, Span: e.Span, Exact: true})
	}
	skip, cluster := ev.skipAnalysis, ev.cluster
	ev.skipAnalysis, ev.cluster = true, true
	defer func() { ev.skipAnalysis, ev.cluster = skip, cluster }()
	for _, d := range docs {
		if otherKind(d) {
			n := notChecked(src, d)
			n.Text = text
			ev.diag(n)
			continue
		}
		_, _, name := docMeta(d)
		body, sv := clusterCRD(d)
		if sv != nil && name != "" && i == len(u.texts)-1 {
			stored[name] = sv
		}
		n := len(ev.st.diags)
		var r CRDResult
		if o := u.olds[name]; o != nil && o.accepted && name != "" {
			r = CRDResult{Document: d.Index, StartLine: docLine(d), EndLine: d.EndLine, Name: name, Warnings: []string{}, Served: []string{}, Versions: []VersionInfo{}}
			resp, _, _ := u.putCRD(name, d, body, &r)
			r.Accepted = resp.status == http.StatusOK
			if !r.Accepted {
				// The cluster keeps what it had: the CRD stays as the text before left it.
				ev.st.diags = append(ev.st.diags, statusDiagnostics(SourceCRDs, d, resp, SeverityError, crdLocator(d))...)
			}
		} else {
			r, _ = ev.installOne(d)
		}
		for _, dg := range ev.st.diags[n:] {
			dg.Source, dg.Text = src, text
			ev.diag(dg)
		}
		ev.st.diags = ev.st.diags[:n]
		if r.Accepted || u.olds[name] == nil {
			u.noteOld(r, i)
		}
	}
}

// setStoredVersions writes status.storedVersions of an old CRD through the API's /status, as a cluster's
// history would have left them (the exported CRD's status, or Input.StoredVersions). The API checks them as
// it checks any status write: each must be a version of spec.versions, and the storage version among them.
func (u *upgrader) setStoredVersions(name string, versions []string, fromInput bool) {
	ev := u.ev
	o := u.olds[name]
	if o == nil || !o.accepted {
		return
	}
	src, text := oldSource(len(u.texts), o.text)
	place := func(msg string) {
		d := u.oldDoc(o)
		dg := Diagnostic{Source: src, Text: text, Document: o.doc, Type: "StoredVersions", Severity: SeverityError, Message: msg,
			Span: yamlpos.Span{Line: o.line, Column: 1, EndLine: o.line, EndColumn: 2}}
		if d != nil {
			at := d.Locate("status.storedVersions")
			if fromInput {
				at = yamlpos.Result{Span: d.Start(), Exact: true}
			}
			dg.Span, dg.Exact = at.Span, at.Exact
		}
		ev.diag(dg)
	}
	g := ev.do(http.MethodGet, crdsPath+"/"+name, "", "application/json", nil)
	var m map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(g.body))
	dec.UseNumber()
	if g.status != http.StatusOK || dec.Decode(&m) != nil {
		place("the stored versions could not be set: the CRD could not be read back")
		return
	}
	st, _ := m["status"].(map[string]interface{})
	if st == nil {
		st = map[string]interface{}{}
		m["status"] = st
	}
	vs := make([]interface{}, len(versions))
	for i, v := range versions {
		vs[i] = v
	}
	st["storedVersions"] = vs
	body, _ := json.Marshal(m)
	r := ev.do(http.MethodPut, crdsPath+"/"+name+"/status", "application/json", "application/json", body)
	if r.status != http.StatusOK {
		place(fmt.Sprintf("the API refuses status.storedVersions %s for this CRD, so no cluster can hold it so: %s", quoteList(versions), statusMessage(r)))
	}
}

// quoteList prints versions as ["v1alpha1", "v1"].
func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// applyNew pairs the new text's CRDs with the old ones by name, PUTs each over its old CRD and POSTs those
// the cluster does not have; the old CRDs the new text lacks are reported as removed (left as they are).
func (u *upgrader) applyNew() {
	ev := u.ev
	if len(u.newText) > maxText {
		ev.diag(Diagnostic{Source: SourceCRDs, Type: "TooLarge", Severity: SeverityError,
			Message: fmt.Sprintf("the CRD text is %d bytes; the playground takes at most %d", len(u.newText), maxText),
			Span:    yamlpos.Span{Line: 1, Column: 1, EndLine: 1, EndColumn: 2}, Exact: true})
		return
	}
	docs, sepErrs := yamlpos.Split(u.newText)
	docs = expandLists(docs)
	for _, e := range sepErrs {
		ev.diag(Diagnostic{Source: SourceCRDs, Document: -1, Type: "YAMLSyntax", Message: e.Message, Severity: SeverityError, Span: e.Span, Exact: true})
	}
	if len(docs) == 0 {
		ev.diag(Diagnostic{Source: SourceCRDs, Type: "NoCRD", Severity: SeverityError,
			Message: "the upgrade check needs the new CRDs: this text is empty", Span: yamlpos.Span{Line: 1, Column: 1, EndLine: 1, EndColumn: 1}, Exact: true})
	}
	seen := map[string]bool{}
	crds := 0
	for _, d := range docs {
		if otherKind(d) {
			ev.diag(notChecked(SourceCRDs, d))
			continue
		}
		crds++
		_, _, name := docMeta(d)
		if name != "" && seen[name] {
			ev.diag(Diagnostic{Source: SourceCRDs, Document: d.Index, Type: "DuplicateCRD", Severity: SeverityError, Span: d.Start(), Exact: true,
				Message: fmt.Sprintf("%s is given twice among the new CRDs: only its first document is checked", name)})
			continue
		}
		p := &pair{name: name, doc: d, i: len(u.rep.CRDs)}
		if name != "" {
			p.old = u.olds[name]
		}
		seen[name] = true
		u.pairs = append(u.pairs, p)
		change := "added"
		if p.old != nil {
			change = "updated"
		}
		u.rep.CRDs = append(u.rep.CRDs, UpgradeCRD{Name: name, Change: change, Source: SourceCRDs, Document: d.Index, Line: docLine(d), Warnings: []string{}})
		if p.old != nil {
			u.replaceCRD(p)
		} else {
			u.addCRD(p)
		}
	}
	if crds == 0 && len(docs) > 0 {
		ev.diag(Diagnostic{Source: SourceCRDs, Type: "NoCRD", Severity: SeverityError, Span: docs[0].Start(), Exact: true,
			Message: "the upgrade check needs the new CRDs: this text holds no CustomResourceDefinition"})
	}
	for _, name := range u.oldOrder {
		if seen[name] {
			continue
		}
		o := u.olds[name]
		p := &pair{name: name, old: o, i: len(u.rep.CRDs)}
		u.pairs = append(u.pairs, p)
		src, text := oldSource(len(u.texts), o.text)
		u.rep.CRDs = append(u.rep.CRDs, UpgradeCRD{Name: name, Change: "removed", Source: src, Document: o.doc, Line: o.line, Warnings: []string{}})
		dg := Diagnostic{Source: src, Text: text, Document: o.doc, Type: "CRDRemoved", Severity: SeverityInfo,
			Span:    yamlpos.Span{Line: o.line, Column: 1, EndLine: o.line, EndColumn: 2},
			Message: fmt.Sprintf("%s is not among the new CRDs: applying them leaves it as it is (deleting it would delete every object of it)", name)}
		if d := u.oldDoc(o); d != nil {
			dg.Span = d.Start()
		}
		dg.Exact = true
		ev.diag(dg)
	}
}

// addCRD POSTs a new CRD the cluster does not have, as kubectl apply would create it.
func (u *upgrader) addCRD(p *pair) {
	ev := u.ev
	n := len(ev.st.diags)
	r, _ := ev.installOne(p.doc)
	ev.res.Diagnostics = append(ev.res.Diagnostics, ev.st.diags[n:]...)
	ev.st.diags = ev.st.diags[:n]
	if ev.res.SchemasOmitted {
		for i := range r.Versions {
			r.Versions[i].Schema = nil
		}
	}
	ev.res.CRDs = append(ev.res.CRDs, r)
	rep := u.crdReport(p)
	rep.Status, rep.Accepted, rep.Warnings = r.Status, r.Accepted, r.Warnings
	if rep.Name == "" {
		rep.Name = r.Name
	}
	if !r.Accepted {
		rep.Error = r.Error
		if sb, ok := parseStatus(r.Error); ok {
			p.refusal = &sb
		}
	}
}

// store creates an object under the old CRD; one the old CRD refuses is seeded, as update mode seeds old
// objects, since it may have been stored under an earlier CRD still. It reports whether the object is
// stored.
func (u *upgrader) store(o *object) bool {
	ev := u.ev
	path := o.crd.path(o.ver, o.ns, "")
	ct, body := o.body()
	if md, _ := o.obj["metadata"].(map[string]interface{}); md != nil && md["resourceVersion"] != nil {
		// Exported from the cluster (kubectl get -o yaml): the object is stored already there, and a create
		// with its resourceVersion is refused by the storage layer; it is stored as created without one.
		m := deepCopyMap(o.obj)
		delete(m["metadata"].(map[string]interface{}), "resourceVersion")
		if b, err := json.Marshal(m); err == nil {
			ct, body = "application/json", b
		}
	}
	r := ev.do(http.MethodPost, path, ct, "application/json", body)
	if r.status >= 200 && r.status < 300 {
		ev.record(o, "create", http.MethodPost, path, r, SeverityError)
		o.adopt(r, false)
		return o.live != nil
	}
	if r.status == http.StatusConflict {
		// Another document of the same kind, namespace and name is stored already (release examples reuse
		// names): a cluster holds one object of a name, the first one here, as kubectl create -f leaves it.
		ev.record(o, "create", http.MethodPost, path, r, SeverityWarning)
		return false
	}
	ev.record(o, "create", http.MethodPost, path, r, SeverityInfo)
	if reason := ev.seed(o); reason != "" {
		ev.objectDiag(o, Diagnostic{Type: "NotSeeded", Severity: SeverityError,
			Message: "the old CRD refuses this object, and it could not be stored as an earlier CRD would have: " + reason,
			Span:    o.doc.Start(), Exact: true})
		return false
	}
	o.res.Seeded = true
	ev.objectDiag(o, Diagnostic{Type: "Seeded", Severity: SeverityInfo,
		Message: "the old CRD refuses this object (see the notes); it was stored without validation, as if created under an earlier CRD, to show what the upgrade does to it",
		Span:    o.doc.Start(), Exact: true})
	u.entry(o).SeedReason = statusMessage(r)
	return true
}

// entry is the report's entry of a stored object, made on first use.
func (u *upgrader) entry(o *object) *UpgradeObject {
	e := u.entries[o]
	if e == nil {
		e = &UpgradeObject{Document: o.doc.Index, Item: o.item, Checks: []UpgradeCheck{}, Before: []UpgradeCheck{}}
		if o.crd != nil {
			e.CRD = o.crd.name
		}
		u.entries[o] = e
	}
	e.Kind, e.Namespace, e.Name, e.Seeded = o.res.Kind, o.ns, o.res.Name, o.res.Seeded
	return e
}

// statusMessage is a failed answer's Status message, or its body.
func statusMessage(r *response) string {
	if st, ok := parseStatus(r.body); ok {
		return st.Message
	}
	return strings.TrimSpace(string(r.body))
}

// crdBody is the JSON a CRD document is PUT with: body when the caller has it (a CRD read as a cluster holds
// it), else the document converted as kubectl converts it, with the stored CRD's resourceVersion unless the
// document names one. Nil when the document does not convert: it is then sent as YAML.
func crdBody(d *yamlpos.Doc, body []byte, rv string) []byte {
	j := body
	if j == nil {
		var err error
		if j, err = yaml.YAMLToJSON([]byte(d.Source)); err != nil {
			return nil
		}
	}
	var m map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return nil
	}
	defaultResourceVersion(m, rv)
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// putCRD PUTs a CRD document over the stored CRD name, as `kubectl replace` would, and, when the API accepts
// it, reads back what the controllers made of it into res. It returns the answer, the CRD as the API held
// it before, and the CRD as it now serves objects (nil unless accepted and established). Diagnostics of the
// read-back go to the install's diagnostics, as an install's do.
func (u *upgrader) putCRD(name string, d *yamlpos.Doc, body []byte, res *CRDResult) (*response, *apiextensionsv1.CustomResourceDefinition, *installed) {
	ev := u.ev
	st := ev.st
	g := ev.do(http.MethodGet, crdsPath+"/"+name, "", "application/json", nil)
	var before *apiextensionsv1.CustomResourceDefinition
	live := &apiextensionsv1.CustomResourceDefinition{}
	if g.status == http.StatusOK && json.Unmarshal(g.body, live) == nil {
		before = live
	}
	ct, b := "application/yaml", []byte(d.Source)
	if j := crdBody(d, body, live.ResourceVersion); j != nil {
		ct, b = "application/json", j
	}
	r := ev.do(http.MethodPut, crdsPath+"/"+name, ct, "application/json", b)
	res.Status, res.Accepted, res.Warnings = r.status, r.status == http.StatusOK, r.warnings
	st.diags = append(st.diags, warningDiagnostics(SourceCRDs, d, r.warnings, crdLocator(d), nil)...)
	if !res.Accepted {
		return r, before, nil
	}
	// The old CRD no longer serves anything: what serves its objects now is the new one.
	for k, c := range st.served {
		if c.name == name {
			delete(st.served, k)
		}
	}
	return r, before, ev.readBack(d, name, res, false)
}

// replaceCRD PUTs the pair's new CRD document over the stored old CRD, records the answer and reads back what
// the controllers made of it.
func (u *upgrader) replaceCRD(p *pair) {
	ev := u.ev
	d := p.doc
	res := CRDResult{Document: d.Index, StartLine: docLine(d), EndLine: d.EndLine, Name: p.name, Warnings: []string{}, Served: []string{}, Versions: []VersionInfo{}}
	defer func() {
		if ev.res.SchemasOmitted {
			for i := range res.Versions {
				res.Versions[i].Schema = nil
			}
		}
		ev.res.CRDs = append(ev.res.CRDs, res)
	}()
	if d.Err != nil {
		ev.diag(Diagnostic{Source: SourceCRDs, Document: d.Index, Type: "YAMLSyntax", Message: d.Err.Message, Severity: SeverityError, Span: d.Err.Span, Exact: true})
	}
	rep := u.crdReport(p)
	if !p.old.accepted {
		// Nothing to update: the old CRD's diagnostics say why. The new one is still explained.
		if newCRD := decodeCRD(d); newCRD != nil {
			ev.analyse(d, newCRD, &res)
		}
		return
	}
	n := len(ev.st.diags)
	r, before, c := u.putCRD(p.name, d, nil, &res)
	ev.res.Diagnostics = append(ev.res.Diagnostics, ev.st.diags[n:]...)
	ev.st.diags = ev.st.diags[:n]
	p.oldLive, p.newC = before, c
	if before != nil {
		rep.StoredVersions = before.Status.StoredVersions
	}
	rep.Status, rep.Accepted, rep.Warnings = r.status, res.Accepted, r.warnings
	if !res.Accepted {
		res.Error = rawJSON(r.body)
		rep.Error = res.Error
		if sb, ok := parseStatus(r.body); ok {
			p.refusal = &sb
		} else {
			p.refusal = &statusBody{Message: statusMessage(r)}
		}
		if d.Err == nil || r.status != http.StatusBadRequest {
			for _, diag := range statusDiagnostics(SourceCRDs, d, r, SeverityError, crdLocator(d)) {
				atCELError(d, &diag)
				if storedVersionCause(diag.Field) {
					// The cause names the status; what the author changes is spec.versions.
					at := d.Locate("spec.versions")
					diag.Span, diag.Exact = at.Span, false
					diag.Fix = migrationFix(p.name, before)
				}
				ev.diag(diag)
			}
		}
		if newCRD := decodeCRD(d); newCRD != nil {
			ev.analyse(d, newCRD, &res)
		}
		return
	}
	if nl := (&apiextensionsv1.CustomResourceDefinition{}); json.Unmarshal(r.body, nl) == nil {
		p.newLive = nl
	}
}

// withQuery adds a query parameter to a path that may have a query already.
func withQuery(path, q string) string {
	if strings.Contains(path, "?") {
		return path + "&" + q
	}
	return path + "?" + q
}

// preCheck makes, under the old CRD and with dryRun=All, the writes check makes after the upgrade: the
// object sent as new, a no-op update, and a no-op status update. What they refuse existed before the upgrade.
func (u *upgrader) preCheck(o *object) {
	ev := u.ev
	e := u.entry(o)
	c := o.crd
	body := o.liveBody
	if body == nil {
		body, _ = json.Marshal(o.live)
	}
	if body == nil || c == nil {
		return
	}
	pre := map[string]map[string]bool{}
	u.pre[o] = pre
	note := func(op string, r *response) {
		e.Before = append(e.Before, failedCheck(o.ver, op, r))
		pre[op] = causeSet(r)
	}
	note("dryrun", u.dryRun(o, c, o.ver, body))
	path := c.path(o.ver, o.ns, o.res.Name)
	note("update", ev.do(http.MethodPut, withQuery(path+ev.query(), "dryRun=All"), "application/json", "application/json", body))
	if c.statusSub[o.ver] {
		note("status", ev.do(http.MethodPut, withQuery(path+"/status"+ev.query(), "dryRun=All"), "application/json", "application/json", body))
	}
}

// causeSet is the causes of a failed answer, as "field\x00message"; nil for a success.
func causeSet(r *response) map[string]bool {
	if r.status < 300 {
		return nil
	}
	out := map[string]bool{}
	st, ok := parseStatus(r.body)
	if !ok {
		return out
	}
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			out[c.Field+"\x00"+c.Message] = true
		}
	}
	if len(out) == 0 {
		out["\x00"+st.Message] = true
	}
	return out
}

// preOp is the op of preCheck whose refusals a check's refusals are held to.
func preOp(op string) string { return op }

// check makes the requests a client's next read and writes would: in every version the new CRD serves, a
// GET, the object sent as new with dryRun=All (the new schema without ratcheting), a PUT of what the GET
// returned (a no-op update: ratcheting lets an unchanged object through, or the API answers why not), and
// the same PUT to /status when the version has the subresource. A refusal the same write met under the old
// CRD is a note: it is not the upgrade's doing.
func (u *upgrader) check(o *object, c *installed) {
	ev := u.ev
	e := u.entry(o)
	seen := map[string]bool{}
	place := func(r *response, op string) {
		for _, d := range warningDiagnostics(o.src, o.doc, r.warnings, docLocator(o.doc), nil) {
			if k := d.Field + "\x00" + d.Message; !seen[k] {
				seen[k] = true
				ev.objectDiag(o, d)
			}
		}
		if r.status >= 200 && r.status < 300 {
			return
		}
		pre := u.pre[o][preOp(op)]
		for _, d := range statusDiagnostics(o.src, o.doc, r, SeverityError, docLocator(o.doc)) {
			if pre[d.Field+"\x00"+d.Message] || (d.Field == "" && pre["\x00"+d.Message]) {
				d.Severity = SeverityInfo
				d.Message += " (the old CRD refuses this too: it is not caused by the upgrade)"
			} else if op == "dryrun" {
				d.Message += " (a stored object sent again as new is refused: ratcheting lets its unchanged updates through, but not the next change there)"
			}
			if k := d.Field + "\x00" + d.Type + "\x00" + d.Message; !seen[k] {
				seen[k] = true
				ev.objectDiag(o, d)
			}
		}
	}
	for _, v := range c.served {
		path := c.path(v, o.ns, o.res.Name)
		g := ev.do(http.MethodGet, path, "", "application/json", nil)
		get := UpgradeCheck{Version: v, Op: "get", Status: g.status, Warnings: g.warnings}
		if g.status == http.StatusOK {
			get.Object = rawJSON(g.body)
		} else {
			get.Error = rawJSON(g.body)
		}
		e.Checks = append(e.Checks, get)
		place(g, "get")
		if g.status != http.StatusOK {
			continue
		}
		fr := u.dryRun(o, c, v, g.body)
		if u.fresh[o] == nil {
			u.fresh[o] = map[string]*response{}
		}
		u.fresh[o][v] = fr
		e.Checks = append(e.Checks, failedCheck(v, "dryrun", fr))
		p := ev.do(http.MethodPut, path+ev.query(), "application/json", "application/json", g.body)
		e.Checks = append(e.Checks, failedCheck(v, "update", p))
		place(p, "update")
		if p.status == http.StatusOK {
			if u.written[o] == nil {
				u.written[o] = map[string]json.RawMessage{}
			}
			u.written[o][v] = p.body
		}
		if c.statusSub[v] {
			// The status write carries what the update left: its answer when it was accepted (with the
			// resourceVersion it may have moved), else what the GET read.
			sbody := g.body
			if p.status == http.StatusOK {
				sbody = p.body
			}
			sp := ev.do(http.MethodPut, path+"/status"+ev.query(), "application/json", "application/json", sbody)
			e.Checks = append(e.Checks, failedCheck(v, "status", sp))
			place(sp, "status")
		}
		// Placed last: a refusal the update met too is said once, as the update's.
		place(fr, "dryrun")
	}
}

// dryRun sends an object as read (read, in version v) as a new object, with dryRun=All, so that the schema
// judges every stored value without ratcheting. The name is generated, since the stored one is taken.
func (u *upgrader) dryRun(o *object, c *installed, v string, read []byte) *response {
	var m map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(read))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return &response{status: http.StatusBadRequest}
	}
	md, _ := m["metadata"].(map[string]interface{})
	keep := map[string]interface{}{"generateName": o.res.Name + "-"}
	for _, k := range []string{"namespace", "labels", "annotations"} {
		if x, ok := md[k]; ok {
			keep[k] = x
		}
	}
	m["metadata"] = keep
	body, err := json.Marshal(m)
	if err != nil {
		return &response{status: http.StatusBadRequest}
	}
	return u.ev.do(http.MethodPost, withQuery(c.path(v, o.ns, ""), "dryRun=All"), "application/json", "application/json", body)
}

// failedCheck is a write check: the answer's body only when it is an error.
func failedCheck(version, op string, r *response) UpgradeCheck {
	c := UpgradeCheck{Version: version, Op: op, Status: r.status, Warnings: r.warnings}
	if c.Warnings == nil {
		c.Warnings = []string{}
	}
	if r.status < 200 || r.status >= 300 {
		c.Error = rawJSON(r.body)
	}
	return c
}

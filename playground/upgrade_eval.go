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

// upgrade runs ModeUpgrade. It needs an engine of its own: the new CRD replaces the old one in it, which no
// rollback undoes, so the session's installed CRDs (those of the other modes) are left as they are.
func (s *Session) upgrade(ctx context.Context, in Input, oldText, newText string, res *Result, trace *[]Exchange) error {
	start := time.Now()
	var engineTime time.Duration
	st, err := s.installLean(ctx, oldText, trace, &engineTime, true, false)
	if err != nil {
		return err
	}
	for _, d := range st.diags {
		d.Source = SourceOldCRDs
		res.Diagnostics = append(res.Diagnostics, d)
	}
	res.Timings.CRDs, res.Timings.CRDEngine = ms(time.Since(start)), ms(engineTime)
	res.CRDRevision = revisionOf(string(ModeUpgrade) + "\x00" + oldText + "\x00" + newText)
	res.SchemasOmitted = in.KnownCRDRevision != "" && in.KnownCRDRevision == res.CRDRevision

	objStart := time.Now()
	ev := &evaluation{ctx: ctx, s: s, st: st, in: in, res: res, trace: trace, skipRuntime: true}
	u := &upgrader{ev: ev, oldText: oldText, newText: newText}
	u.run()
	res.Timings.Objects = ms(time.Since(objStart))
	res.Timings.ObjectEngine, res.Timings.Parse = ms(ev.engineTime), ms(ev.parseTime)
	return nil
}

// upgrader is one ModeUpgrade evaluation past the old CRD's install.
type upgrader struct {
	ev               *evaluation
	oldText, newText string
	rep              *UpgradeReport
	// stored are the objects stored under the old CRD, with their report entries (same order).
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
	// newC is the new CRD once the API accepted and established it.
	newC *installed
	// oldLive and newLive are the CRD as the API held it before the PUT and after it (nil when refused).
	oldLive, newLive *apiextensionsv1.CustomResourceDefinition
	// refusal is the new CRD's Status when the API refused it.
	refusal *statusBody
}

// run stores the objects under the old CRD, sends the new CRD as its update, checks every stored object
// against it, and places the static findings with their evidence.
func (u *upgrader) run() {
	ev := u.ev
	res := ev.res
	u.rep = &UpgradeReport{CRD: UpgradeCRD{Warnings: []string{}}, Objects: []UpgradeObject{}, Findings: []Finding{}}
	res.Upgrade = u.rep
	res.CRDs = []CRDResult{}
	u.before = map[*object]map[string]interface{}{}
	u.entries = map[*object]*UpgradeObject{}
	u.written = map[*object]map[string]json.RawMessage{}
	u.fresh = map[*object]map[string]*response{}

	oldCRD := u.oldCRD()
	newDoc := u.newDoc()

	objs := ev.parse(SourceObjects, ev.in.Objects)
	for _, o := range objs {
		if o.crd == nil {
			continue
		}
		if o.crd != oldCRD {
			// Served by another CRD of the old text, which the check leaves out.
			ev.fail(o, "NoKindMatch", fmt.Sprintf("the upgrade check takes one CRD in each text, and %s is not the first CRD of the old text", o.crd.name), "kind")
			o.crd = nil
			continue
		}
		if u.store(o) {
			ev.finish(o, nil)
			u.before[o] = o.live
			u.stored = append(u.stored, o)
		}
	}

	if newDoc != nil {
		u.newC = u.replaceCRD(oldCRD, newDoc)
	}
	newC := u.newC
	for _, o := range u.stored {
		if newC != nil {
			u.check(o, newC)
			o.crd = newC // kubectl get lists it as the new CRD serves it
		}
		u.rep.Objects = append(u.rep.Objects, *u.entry(o))
	}
	ev.tables(u.stored)
	res.OldObjects = []ObjectResult{}
	res.Objects = results(objs)
	u.findings(newDoc)
}

// oldCRD is the old text's CRD as the API accepted it, or nil (the install's diagnostics say why). The
// check takes one CRD in each text.
func (u *upgrader) oldCRD() *installed {
	st := u.ev.st
	if len(st.results) == 0 {
		if len(strings.TrimSpace(u.oldText)) == 0 {
			u.ev.diag(Diagnostic{Source: SourceOldCRDs, Type: "NoCRD", Severity: SeverityError,
				Message: "the upgrade check needs the old CRD: this text is empty", Span: yamlpos.Span{Line: 1, Column: 1, EndLine: 1, EndColumn: 1}, Exact: true})
		}
		return nil
	}
	for _, r := range st.results[1:] {
		u.ev.diag(Diagnostic{Source: SourceOldCRDs, Document: r.Document, Type: "TooManyCRDs", Severity: SeverityError,
			Message: "the upgrade check takes one CRD in each text: this document is not checked",
			Span:    yamlpos.Span{Line: r.StartLine, Column: 1, EndLine: r.StartLine, EndColumn: 1}, Exact: false})
	}
	first := st.results[0]
	for _, c := range st.served {
		if c.name == first.Name {
			return c
		}
	}
	return nil
}

// newDoc is the new text's CRD document, or nil (with a diagnostic).
func (u *upgrader) newDoc() *yamlpos.Doc {
	if len(u.newText) > maxText {
		u.ev.diag(Diagnostic{Source: SourceCRDs, Type: "TooLarge", Severity: SeverityError,
			Message: fmt.Sprintf("the CRD text is %d bytes; the playground takes at most %d", len(u.newText), maxText),
			Span:    yamlpos.Span{Line: 1, Column: 1, EndLine: 1, EndColumn: 2}, Exact: true})
		return nil
	}
	docs, sepErrs := yamlpos.Split(u.newText)
	for _, e := range sepErrs {
		u.ev.diag(Diagnostic{Source: SourceCRDs, Document: -1, Type: "YAMLSyntax", Message: e.Message, Severity: SeverityError, Span: e.Span, Exact: true})
	}
	if len(docs) == 0 {
		u.ev.diag(Diagnostic{Source: SourceCRDs, Type: "NoCRD", Severity: SeverityError,
			Message: "the upgrade check needs the new CRD: this text is empty", Span: yamlpos.Span{Line: 1, Column: 1, EndLine: 1, EndColumn: 1}, Exact: true})
		return nil
	}
	for _, d := range docs[1:] {
		u.ev.diag(Diagnostic{Source: SourceCRDs, Document: d.Index, Type: "TooManyCRDs", Severity: SeverityError,
			Message: "the upgrade check takes one CRD in each text: this document is not checked", Span: d.Start(), Exact: true})
	}
	return docs[0]
}

// store creates an object under the old CRD; one the old CRD refuses is seeded, as update mode seeds old
// objects, since it may have been stored under an earlier CRD still. It reports whether the object is
// stored.
func (u *upgrader) store(o *object) bool {
	ev := u.ev
	path := o.crd.path(o.ver, o.ns, "")
	ct, body := o.body()
	r := ev.do(http.MethodPost, path, ct, "application/json", body)
	if r.status >= 200 && r.status < 300 {
		ev.record(o, "create", http.MethodPost, path, r, SeverityError)
		o.adopt(r, false)
		return o.live != nil
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
		e = &UpgradeObject{Document: o.doc.Index, Item: o.item, Checks: []UpgradeCheck{}}
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

// replaceCRD PUTs the new CRD document over the stored old CRD, as `kubectl replace` would (JSON, with the
// stored CRD's resourceVersion unless the text has one), records the answer and reads back what the
// controllers made of it. It returns the new CRD when the API accepted and established it.
func (u *upgrader) replaceCRD(old *installed, d *yamlpos.Doc) *installed {
	ev := u.ev
	st := ev.st
	res := CRDResult{Document: d.Index, StartLine: d.StartLine, EndLine: d.EndLine, Warnings: []string{}, Served: []string{}, Versions: []VersionInfo{}}
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
	if old == nil {
		// Nothing to update: the old CRD's diagnostics say why. The new one is still explained.
		if newCRD := decodeCRD(d); newCRD != nil {
			ev.analyse(d, newCRD, &res)
			u.rep.CRD.Name = newCRD.Name
		}
		return nil
	}
	u.rep.CRD.Name = old.name
	g := ev.do(http.MethodGet, crdsPath+"/"+old.name, "", "application/json", nil)
	live := &apiextensionsv1.CustomResourceDefinition{}
	if g.status == http.StatusOK && json.Unmarshal(g.body, live) == nil {
		u.oldLive = live
	}

	ct, body := "application/yaml", []byte(d.Source)
	if j, err := yaml.YAMLToJSON([]byte(d.Source)); err == nil {
		var m map[string]interface{}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		if dec.Decode(&m) == nil && m != nil {
			defaultResourceVersion(m, live.ResourceVersion)
			if b, err := json.Marshal(m); err == nil {
				ct, body = "application/json", b
			}
		}
	}
	r := ev.do(http.MethodPut, crdsPath+"/"+old.name, ct, "application/json", body)
	res.Status, res.Accepted, res.Warnings = r.status, r.status == http.StatusOK, r.warnings
	u.rep.CRD.Status, u.rep.CRD.Accepted, u.rep.CRD.Warnings = r.status, res.Accepted, r.warnings
	loc := crdLocator(d)
	for _, w := range warningDiagnostics(SourceCRDs, d, r.warnings, loc, nil) {
		ev.diag(w)
	}
	if !res.Accepted {
		res.Error = rawJSON(r.body)
		u.rep.CRD.Error = res.Error
		if sb, ok := parseStatus(r.body); ok {
			u.refusal = &sb
		} else {
			u.refusal = &statusBody{Message: statusMessage(r)}
		}
		if d.Err == nil || r.status != http.StatusBadRequest {
			for _, diag := range statusDiagnostics(SourceCRDs, d, r, SeverityError, loc) {
				atCELError(d, &diag)
				ev.diag(diag)
			}
		}
		if newCRD := decodeCRD(d); newCRD != nil {
			ev.analyse(d, newCRD, &res)
		}
		return nil
	}
	if nl := (&apiextensionsv1.CustomResourceDefinition{}); json.Unmarshal(r.body, nl) == nil {
		u.newLive = nl
	}
	// The old CRD no longer serves anything: what serves objects now is the new one.
	st.served = map[gvk]*installed{}
	n := len(st.diags)
	c := ev.readBack(d, old.name, &res, false)
	ev.res.Diagnostics = append(ev.res.Diagnostics, st.diags[n:]...)
	return c
}

// check makes the requests a client's next read and writes would: in every version the new CRD serves, a
// GET, a PUT of what the GET returned (a no-op update: ratcheting lets an unchanged object through, or the
// API answers why not), and the same PUT to /status when the version has the subresource.
func (u *upgrader) check(o *object, c *installed) {
	ev := u.ev
	e := u.entry(o)
	seen := map[string]bool{}
	place := func(r *response, sev Severity) {
		for _, d := range warningDiagnostics(o.src, o.doc, r.warnings, docLocator(o.doc), nil) {
			if k := d.Field + "\x00" + d.Message; !seen[k] {
				seen[k] = true
				ev.objectDiag(o, d)
			}
		}
		if r.status >= 200 && r.status < 300 {
			return
		}
		for _, d := range statusDiagnostics(o.src, o.doc, r, sev, docLocator(o.doc)) {
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
		place(g, SeverityError)
		if g.status != http.StatusOK {
			continue
		}
		u.dryRun(o, c, v, g.body)
		p := ev.do(http.MethodPut, path+ev.query(), "application/json", "application/json", g.body)
		e.Checks = append(e.Checks, failedCheck(v, "update", p))
		place(p, SeverityError)
		if p.status == http.StatusOK {
			if u.written[o] == nil {
				u.written[o] = map[string]json.RawMessage{}
			}
			u.written[o][v] = p.body
		}
		if !c.statusSub[v] {
			continue
		}
		// The status write carries what the update left: its answer when it was accepted (with the
		// resourceVersion it may have moved), else what the GET read.
		sbody := g.body
		if p.status == http.StatusOK {
			sbody = p.body
		}
		sp := ev.do(http.MethodPut, path+"/status"+ev.query(), "application/json", "application/json", sbody)
		e.Checks = append(e.Checks, failedCheck(v, "status", sp))
		place(sp, SeverityError)
	}
}

// dryRun sends what a GET returned as a new object, with dryRun=All, so that the new schema judges every
// stored value without ratcheting: the evidence of values that pass an unchanged update but fail once they
// change. The name is generated, since the stored one is taken.
func (u *upgrader) dryRun(o *object, c *installed, v string, read []byte) {
	var m map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(read))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return
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
		return
	}
	r := u.ev.do(http.MethodPost, c.path(v, o.ns, "")+"?dryRun=All", "application/json", "application/json", body)
	if u.fresh[o] == nil {
		u.fresh[o] = map[string]*response{}
	}
	u.fresh[o][v] = r
}

// failedCheck is a write check: the answer's body only when it is an error.
func failedCheck(version, op string, r *response) UpgradeCheck {
	c := UpgradeCheck{Version: version, Op: op, Status: r.status, Warnings: r.warnings}
	if r.status < 200 || r.status >= 300 {
		c.Error = rawJSON(r.body)
	}
	return c
}

// firstDoc is a text's first document, or nil.
func firstDoc(text string) *yamlpos.Doc {
	if len(text) > maxText {
		return nil
	}
	docs, _ := yamlpos.Split(text)
	if len(docs) == 0 {
		return nil
	}
	return docs[0]
}

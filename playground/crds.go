package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	yaml3 "go.yaml.in/yaml/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/yaml"

	"crdplay/playground/internal/celcost"
	"crdplay/playground/internal/explain"
	"crdplay/playground/internal/k8sversions"
	"crdplay/playground/internal/yamlpos"
)

const crdsPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// crdState is a CRD text installed in an engine of its own, with everything derived from it once.
type crdState struct {
	text     string
	revision string
	handler  http.Handler
	store    *journal
	docs     []*yamlpos.Doc
	results  []CRDResult
	diags    []Diagnostic
	// served maps group/version/kind to the established CRD that serves it: the REST mapping kubectl gets
	// from discovery.
	served map[gvk]*installed
	// pending is the analysis an install with Input.DeferAnalysis left for later (analysePending), one entry
	// per CRD document that has one; docs stay parsed until then, for placing it.
	pending []*pendingAnalysis
}

// pendingAnalysis is one CRD document's analysis, left for later.
type pendingAnalysis struct {
	d *yamlpos.Doc
	// crd is the CRD to analyse, or nil for the one the API answered in body (decoded when analysed).
	crd  *apiextensionsv1.CustomResourceDefinition
	body []byte
	// i is the document's index in crdState.results; c is its established CRD (nil when it is not).
	i int
	c *installed
}

type gvk struct{ group, version, kind string }

// installed is what the playground needs to know of an established CRD to send it objects.
type installed struct {
	name, group, plural, kind string
	namespaced                bool
	served                    []string
	storage, preferred        string
	conversionNone            bool
	statusSub                 map[string]bool
	deprecated                map[string]bool
	// runtime holds, per served version, its schema as the analysis prepared it: runtimeFor builds the
	// version's CEL validator from it when an object of the version is first evaluated.
	runtime map[string]*celcost.Schema
	// ruleFields are, per version, the object paths that carry x-kubernetes-validations rules ("" for the
	// root, "spec.tags[*]" for list items), in the schema's order.
	ruleFields map[string][]string
	// seeders are, per version, the create field managers that give seeded objects their managedFields
	// (seedFieldManager); built on first use, nil when they cannot be.
	seeders map[string]*managedfields.FieldManager
}

// runtimeFor is the runtime cost model of a version, built on first use (nil without rules).
func (c *installed) runtimeFor(version string) *celcost.Runtime {
	return celcost.NewRuntimeFrom(c.runtime[version])
}

func (c *installed) path(version, namespace, name string) string {
	p := "/apis/" + c.group + "/" + version
	if c.namespaced && namespace != "" {
		p += "/namespaces/" + namespace
	}
	p += "/" + c.plural
	if name != "" {
		p += "/" + name
	}
	return p
}

// resultsFor returns the CRD results, without the schema trees when the caller has them.
func (st *crdState) resultsFor(omitSchemas bool) []CRDResult {
	out := make([]CRDResult, len(st.results))
	copy(out, st.results)
	if omitSchemas {
		for i := range out {
			vs := make([]VersionInfo, len(out[i].Versions))
			copy(vs, out[i].Versions)
			for j := range vs {
				vs[j].Schema = nil
			}
			out[i].Versions = vs
		}
	}
	return out
}

// install starts an engine and creates every CRD of text in it, in order, as `kubectl create -f` would. With
// deferAnalysis, the playground's analysis of the CRDs (cost reports, version analysis, explain trees, runtime
// cost models) is left in st.pending, for analysePending: the engine's answers are complete without it.
func (s *Session) install(ctx context.Context, text string, trace *[]Exchange, engineTime *time.Duration, deferAnalysis bool) (*crdState, error) {
	st, _, err := s.installLean(ctx, text, trace, engineTime, false, deferAnalysis)
	return st, err
}

// installLean is install, without the cost reports, explain trees and runtime cost models when lean is set:
// for CRDs that only serve to store objects under (ModeUpgrade's old CRDs), which are then read as a cluster
// holds them (clusterCRD): the status.storedVersions each carries are returned by CRD name.
func (s *Session) installLean(ctx context.Context, text string, trace *[]Exchange, engineTime *time.Duration, lean, deferAnalysis bool) (*crdState, map[string][]string, error) {
	h, store, err := s.newEngine()
	if err != nil {
		return nil, nil, err
	}
	st := &crdState{text: text, revision: revisionOf(text), handler: h, store: store, served: map[gvk]*installed{}, results: []CRDResult{}}
	ev := &evaluation{ctx: ctx, s: s, st: st, trace: trace, skipAnalysis: lean, skipRuntime: lean, deferAnalysis: deferAnalysis && !lean, cluster: lean}
	defer func() { *engineTime = ev.engineTime }()
	if len(text) > maxText {
		st.diags = append(st.diags, Diagnostic{Source: SourceCRDs, Type: "TooLarge", Severity: SeverityError,
			Message: fmt.Sprintf("the CRD text is %d bytes; the playground takes at most %d", len(text), maxText),
			Span:    yamlpos.Span{Line: 1, Column: 1, EndLine: 1, EndColumn: 2}, Exact: true})
		return st, nil, nil
	}
	docs, sepErrs := yamlpos.Split(text)
	docs = expandLists(docs)
	st.docs = docs
	for _, e := range sepErrs {
		st.diags = append(st.diags, Diagnostic{Source: SourceCRDs, Document: -1, Type: "YAMLSyntax", Message: e.Message, Severity: SeverityError, Span: e.Span, Exact: true})
	}
	var stored map[string][]string
	var policyDocs []*yamlpos.Doc
	for _, d := range docs {
		if otherKind(d) && s.heldPolicy(d) {
			policyDocs = append(policyDocs, d)
			continue
		}
		if otherKind(d) {
			st.diags = append(st.diags, notChecked(SourceCRDs, d))
			continue
		}
		r, sv := ev.installOne(d)
		if sv != nil && r.Name != "" {
			if stored == nil {
				stored = map[string][]string{}
			}
			stored[r.Name] = sv
		}
		st.results = append(st.results, r)
	}
	ev.applyPolicies(policyDocs)
	if len(st.pending) == 0 {
		// Everything positioned in the CRD text is placed by now; the parse trees of a large CRD are a
		// good part of the heap that every later garbage collection would walk.
		st.docs = nil
	}
	return st, stored, nil
}

// analysePending runs the analysis an install left for later, and fills the results and the established
// CRDs' runtime cost models with it, as an install without deferral would have.
func (st *crdState) analysePending() {
	for _, p := range st.pending {
		crd := p.crd
		if crd == nil {
			crd = &apiextensionsv1.CustomResourceDefinition{}
			if json.Unmarshal(p.body, crd) != nil {
				continue // readBack decoded it already
			}
		}
		res := &st.results[p.i]
		schemas := analyseInto(p.d, crd, res)
		if p.c != nil {
			p.c.setRuntime(crd, schemas)
		}
	}
	st.pending, st.docs = nil, nil
}

// installOne POSTs one CRD document and reads back what the controllers made of it. For a CRD read as a
// cluster holds it (ev.cluster), it also returns the status.storedVersions the document carries.
func (ev *evaluation) installOne(d *yamlpos.Doc) (CRDResult, []string) {
	st := ev.st
	res := CRDResult{Document: d.Index, StartLine: d.StartLine, EndLine: d.EndLine, Warnings: []string{}, Served: []string{}, Versions: []VersionInfo{}}
	res.StartLine = docLine(d)
	_, _, res.Name = docMeta(d)
	loc := crdLocator(d)
	// A document that is not YAML is one error, where go-yaml places it; the API's 400 to it (its own words
	// for the same, with the lines of the document it was sent and the body's first bytes in hex) is the
	// error's Detail.
	syntax := -1
	if d.Err != nil {
		syntax = len(st.diags)
		st.diags = append(st.diags, Diagnostic{Source: SourceCRDs, Document: d.Index, Type: "YAMLSyntax", Message: d.Err.Message, Severity: SeverityError, Span: d.Err.Span, Exact: true})
	}
	// The document as the user wrote it, so that the API's YAML errors are its own; or the same as JSON, as
	// kubectl sends it, when the API would read the YAML the same way (crdJSON).
	var stored []string
	var body []byte
	if ev.cluster {
		// Exported from a cluster: created without what the API sets; its stored versions are written
		// through /status afterwards (ModeUpgrade).
		body, stored = clusterCRD(d)
	}
	ct := "application/json"
	if body == nil {
		ct, body = docBody(d)
	}
	sentJSON := ct == "application/json"
	r := ev.do(http.MethodPost, crdsPath, ct, "application/json", body)
	res.Status = r.status
	res.Accepted = r.status == http.StatusCreated
	res.Warnings = r.warnings
	st.diags = append(st.diags, warningDiagnostics(SourceCRDs, d, r.warnings, loc, nil)...)
	if !res.Accepted {
		res.Error = json.RawMessage(r.body)
		if !json.Valid(r.body) {
			res.Error, _ = json.Marshal(string(r.body))
		}
		if syntax >= 0 && r.status == http.StatusBadRequest {
			if apiSt, ok := parseStatus(r.body); ok {
				st.diags[syntax].Detail = apiSt.Message
			}
		} else {
			diags := statusDiagnostics(SourceCRDs, d, r, SeverityError, loc)
			for i := range diags {
				atCELError(d, &diags[i])
			}
			st.diags = append(st.diags, diags...)
		}
	}

	if !res.Accepted {
		// Refused: the text, read leniently, still has versions, rules to cost and schemas to explain.
		if crd := decodeCRD(d); crd != nil && !ev.skipAnalysis {
			ev.analyse(d, crd, &res)
		}
		return res, stored
	}

	name := createdName(r.body)
	if name == "" {
		return res, stored
	}
	ev.readBack(d, name, &res, sentJSON)
	return res, stored
}

// createdName is metadata.name of a created object's JSON, read without decoding what follows metadata (a big
// CRD's schemas: the API writes spec after metadata); "" when there is none.
func createdName(body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		if t == "metadata" {
			var m struct {
				Name string `json:"name"`
			}
			if dec.Decode(&m) != nil {
				return ""
			}
			return m.Name
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// readBack reads what the naming and establishing controllers made of a CRD the API accepted (the engine runs
// them before it answers), fills res with it and, once established, adds it to the CRDs that serve objects and
// returns it (nil when it is not established). sentJSON says the document went as JSON (crdJSON): the API then
// read the same schemas as its text has.
func (ev *evaluation) readBack(d *yamlpos.Doc, name string, res *CRDResult, sentJSON bool) *installed {
	st := ev.st
	g := ev.do(http.MethodGet, crdsPath+"/"+name, "", "application/json", nil)
	var live apiextensionsv1.CustomResourceDefinition
	// lite is set when the analysis waits and the text has the API's schemas (it went as JSON): live is then
	// decoded without its schemas, lite has their rules' places from the text, and the whole answer is
	// decoded when it is analysed.
	var lite map[string][]string
	ok := g.status == http.StatusOK
	if ok && ev.deferAnalysis && sentJSON {
		lite, ok = decodeLite(g.body, &live, d)
	}
	if ok && lite == nil {
		live = apiextensionsv1.CustomResourceDefinition{}
		ok = json.Unmarshal(g.body, &live) == nil
	}
	if !ok {
		if crd := decodeCRD(d); crd != nil && !ev.skipAnalysis {
			ev.analyse(d, crd, res)
		}
		return nil
	}
	// The CRD as the API holds it (defaults applied) is what the page explains: no need to decode the text.
	var schemas []*celcost.Schema
	var pending *pendingAnalysis
	switch {
	case lite != nil:
		describe(&live, res)
		pending = &pendingAnalysis{d: d, body: g.body, i: len(st.results)}
		st.pending = append(st.pending, pending)
	case !ev.skipAnalysis:
		// Analysed now, also when the install defers (a document that went as YAML): the places of its
		// rules come from its cost report.
		describe(&live, res)
		schemas = analyseInto(d, &live, res)
	case !ev.skipRuntime:
		schemas = celcost.Prepare(&live)
	}
	res.Name = live.Name
	n := live.Status.AcceptedNames
	if n.Plural != "" || n.Kind != "" {
		res.AcceptedNames = &Names{Plural: n.Plural, Singular: n.Singular, Kind: n.Kind, ListKind: n.ListKind, ShortNames: n.ShortNames, Categories: n.Categories}
	}
	for _, c := range live.Status.Conditions {
		res.Conditions = append(res.Conditions, Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message})
		if c.Status == apiextensionsv1.ConditionTrue && c.Type == apiextensionsv1.Established {
			res.Established = true
		}
		if c.Status == apiextensionsv1.ConditionFalse && (c.Type == apiextensionsv1.NamesAccepted || c.Type == apiextensionsv1.Established) {
			field := "status.conditions"
			sp := d.Locate("spec.names")
			if c.Type == apiextensionsv1.Established {
				sp = yamlpos.Result{Span: d.Start(), Exact: true}
			}
			st.diags = append(st.diags, Diagnostic{Source: SourceCRDs, Document: d.Index, Field: field, Type: string(c.Type) + ":" + c.Reason,
				Message: c.Message, Severity: SeverityError, Span: sp.Span, Exact: sp.Exact})
		}
	}
	for _, v := range live.Spec.Versions {
		if v.Storage {
			res.Storage = v.Name
		}
	}
	if !res.Established {
		return nil
	}
	for _, v := range live.Spec.Versions {
		if v.Served {
			res.Served = append(res.Served, v.Name)
		}
	}
	c := &installed{
		name: live.Name, group: live.Spec.Group, plural: n.Plural, kind: n.Kind,
		namespaced: live.Spec.Scope == apiextensionsv1.NamespaceScoped,
		served:     res.Served, storage: res.Storage,
		conversionNone: live.Spec.Conversion == nil || live.Spec.Conversion.Strategy == apiextensionsv1.NoneConverter,
		statusSub:      map[string]bool{}, deprecated: map[string]bool{}, runtime: map[string]*celcost.Schema{},
		ruleFields: map[string][]string{},
	}
	for i, v := range live.Spec.Versions {
		if rules, ok := lite[v.Name]; ok {
			c.ruleFields[v.Name] = rules
		} else if i < len(res.Versions) && res.Versions[i].Name == v.Name {
			for _, r := range res.Versions[i].CEL.Rules {
				c.ruleFields[v.Name] = append(c.ruleFields[v.Name], r.Self)
			}
		}
		c.statusSub[v.Name] = v.Subresources != nil && v.Subresources.Status != nil
		c.deprecated[v.Name] = v.Deprecated
	}
	if pending != nil {
		pending.c = c
	} else if !ev.skipRuntime {
		c.setRuntime(&live, schemas)
	}
	// The preferred version, as discovery reports it (kubectl get lists in it).
	if dr := ev.do(http.MethodGet, "/apis/"+c.group, "", "application/json", nil); dr.status == http.StatusOK {
		var group struct {
			PreferredVersion struct {
				Version string `json:"version"`
			} `json:"preferredVersion"`
		}
		if json.Unmarshal(dr.body, &group) == nil {
			c.preferred = group.PreferredVersion.Version
		}
	}
	if c.preferred == "" && len(c.served) > 0 {
		c.preferred = c.served[0]
	}
	res.Preferred = c.preferred
	for _, v := range c.served {
		st.served[gvk{c.group, v, c.kind}] = c
	}
	return c
}

// liteCRD is what readBack reads of a CRD while its analysis waits: all it reads but the versions' schemas,
// which are most of a big CRD's JSON.
type liteCRD struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group      string                                    `json:"group"`
		Scope      apiextensionsv1.ResourceScope             `json:"scope"`
		Conversion *apiextensionsv1.CustomResourceConversion `json:"conversion"`
		Versions   []struct {
			Name                     string                                           `json:"name"`
			Served                   bool                                             `json:"served"`
			Storage                  bool                                             `json:"storage"`
			Deprecated               bool                                             `json:"deprecated"`
			DeprecationWarning       *string                                          `json:"deprecationWarning"`
			Subresources             *apiextensionsv1.CustomResourceSubresources      `json:"subresources"`
			AdditionalPrinterColumns []apiextensionsv1.CustomResourceColumnDefinition `json:"additionalPrinterColumns"`
			Schema                   *struct{}                                        `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
	Status apiextensionsv1.CustomResourceDefinitionStatus `json:"status"`
}

// decodeLite decodes body as a liteCRD into crd, which gets no schemas, and returns the places of each
// version's rules (celcost.RuleSelvesYAML) read from the schemas in d, the text the API read them from.
// It returns nil when a version with a schema in body has none of that name in d.
func decodeLite(body []byte, crd *apiextensionsv1.CustomResourceDefinition, d *yamlpos.Doc) (map[string][]string, bool) {
	var l liteCRD
	if json.Unmarshal(body, &l) != nil {
		return nil, false
	}
	crd.TypeMeta = l.TypeMeta
	crd.Name = l.Metadata.Name
	crd.Spec.Group, crd.Spec.Scope, crd.Spec.Conversion = l.Spec.Group, l.Spec.Scope, l.Spec.Conversion
	crd.Status = l.Status
	rules := map[string][]string{}
	for i, v := range l.Spec.Versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v.Name, Served: v.Served, Storage: v.Storage, Deprecated: v.Deprecated, DeprecationWarning: v.DeprecationWarning,
			Subresources: v.Subresources, AdditionalPrinterColumns: v.AdditionalPrinterColumns,
		})
		if v.Schema == nil {
			continue
		}
		at := []yamlpos.Seg{yamlpos.K("spec"), yamlpos.K("versions"), yamlpos.I(i)}
		schema := d.Sub(yamlpos.Append(at, yamlpos.K("schema"), yamlpos.K("openAPIV3Schema")))
		name := d.Sub(yamlpos.Append(at, yamlpos.K("name")))
		if schema == nil || name == nil || name.Root.Value != v.Name {
			return nil, true
		}
		rules[v.Name] = celcost.RuleSelvesYAML(schema.Root)
	}
	return rules, true
}

// setRuntime keeps the served versions' schemas as the analysis prepared them, for runtimeFor.
func (c *installed) setRuntime(crd *apiextensionsv1.CustomResourceDefinition, schemas []*celcost.Schema) {
	for i, v := range crd.Spec.Versions {
		if v.Served && v.Schema != nil && i < len(schemas) {
			c.runtime[v.Name] = schemas[i]
		}
	}
}

// analyse fills what the playground derives from a CRD itself: its versions with their printer columns, the
// cost report of their rules and their explain trees, placed in the document. It returns the versions'
// schemas as celcost prepared them, for the runtime cost models. It fills the versions
// alone and leaves the rest in st.pending (returning nil) while the install defers its analysis.
func (ev *evaluation) analyse(d *yamlpos.Doc, crd *apiextensionsv1.CustomResourceDefinition, res *CRDResult) []*celcost.Schema {
	describe(crd, res)
	if ev.deferAnalysis {
		ev.st.pending = append(ev.st.pending, &pendingAnalysis{d: d, crd: crd, i: len(ev.st.results)})
		return nil
	}
	return analyseInto(d, crd, res)
}

// describe fills what the text declares of a CRD and its versions (names, scope, subresources, columns).
func describe(crd *apiextensionsv1.CustomResourceDefinition, res *CRDResult) {
	res.Name = crd.Name
	res.Group = crd.Spec.Group
	res.Scope = string(crd.Spec.Scope)
	res.Conversion = "None"
	if crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy != "" {
		res.Conversion = string(crd.Spec.Conversion.Strategy)
	}
	res.Versions = make([]VersionInfo, 0, len(crd.Spec.Versions))
	for _, v := range crd.Spec.Versions {
		vi := VersionInfo{Name: v.Name, Served: v.Served, Storage: v.Storage, Deprecated: v.Deprecated, DeprecationWarning: v.DeprecationWarning}
		if v.Subresources != nil {
			vi.StatusSubresource = v.Subresources.Status != nil
			vi.ScaleSubresource = v.Subresources.Scale != nil
		}
		for _, c := range v.AdditionalPrinterColumns {
			vi.Columns = append(vi.Columns, PrinterColumn{Name: c.Name, Type: c.Type, JSONPath: c.JSONPath, Priority: c.Priority})
		}
		// Filled by analyseInto; until then a version's report has no rules.
		vi.CEL = celcost.Version{Version: v.Name, Rules: []celcost.Rule{}}
		res.Versions = append(res.Versions, vi)
	}
}

// analyseInto adds to the versions describe filled the cost report of their rules, the version analysis
// and the explain trees, placed in the document.
func analyseInto(d *yamlpos.Doc, crd *apiextensionsv1.CustomResourceDefinition, res *CRDResult) []*celcost.Schema {
	schemas := celcost.Prepare(crd)
	costs := celcost.ReportPrepared(crd, schemas)
	locate := d.Locator()
	compat := k8sversions.AnalyzePrepared(crd, costs, schemas)
	compat.Place(locate)
	res.Compat = &compat
	for i, v := range crd.Spec.Versions {
		vi := &res.Versions[i]
		if i < len(costs) {
			vi.CEL = costs[i]
			for j := range vi.CEL.Rules {
				r := &vi.CEL.Rules[j]
				sp := locate(r.Segs).Span
				r.Span = &sp
			}
		}
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			segs := []yamlpos.Seg{yamlpos.K("spec"), yamlpos.K("versions"), yamlpos.I(i), yamlpos.K("schema"), yamlpos.K("openAPIV3Schema")}
			vi.Schema = explain.Build(v.Schema.OpenAPIV3Schema, segs, func(segs []yamlpos.Seg) *yamlpos.Span {
				r := locate(segs)
				if !r.Exact {
					return nil
				}
				return &r.Span
			})
		}
	}
	return schemas
}

// crdJSON is a CRD document as JSON, converted by the same function the API's YAML decoder starts with
// (sigs.k8s.io/yaml.YAMLToJSON), so that the API reads the same object from it; nil when the API's answer to
// the YAML could differ. Besides that conversion, the API's YAML decoder parses the text again strictly, only
// to report duplicate keys (apimachinery's serializer/json: "rework YAMLToJSONStrict ... so we don't have to do
// this twice"), which JSON no longer has: so JSON is sent only for a document whose mappings have no key that
// YAML 1.1 could read as another one's (plainKeys), and whose YAML and JSON both fit the request limit (an
// over-large text gets the API's own 413). For a big CRD that second parse is a good part of the POST.
// docBody is what a document of the CRD text is sent as: its JSON when the API would read the YAML the same way
// (crdJSON), else the YAML as written.
func docBody(d *yamlpos.Doc) (contentType string, body []byte) {
	if j := crdJSON(d); j != nil {
		return "application/json", j
	}
	return "application/yaml", []byte(d.Source)
}

func crdJSON(d *yamlpos.Doc) []byte {
	if d.JSON != nil {
		return d.JSON // a List's item: kubectl sends it as JSON
	}
	if !readsAsItsJSON(d) {
		return nil
	}
	j, err := yaml.YAMLToJSON([]byte(d.Source))
	if err != nil || len(j) >= maxRequestBytes {
		return nil
	}
	return j
}

// readsAsItsJSON reports whether the API reads the YAML document d as it reads d's conversion to JSON, and
// its text fits the request limit: a mapping without a syntax error whose keys are plainKeys. The caller
// checks that the JSON fits too.
func readsAsItsJSON(d *yamlpos.Doc) bool {
	return d.Err == nil && d.Root != nil && d.Root.Kind == yaml3.MappingNode && len(d.Source) < maxRequestBytes && plainKeys(d.Root)
}

// plainKeys reports whether no two keys of a mapping in n can be the same key to YAML 1.1 (go-yaml v2, which
// the API's decoder uses): every key is a scalar without tag or anchor, read as the string it spells (quoted,
// or plain and not resolved as a number, boolean, null, timestamp or merge key), and no two are equal. A
// node with anchors or aliases is refused too. It errs on the side of false: the YAML is then sent as it is.
func plainKeys(n *yaml3.Node) bool {
	if n.Anchor != "" || n.Kind == yaml3.AliasNode {
		return false
	}
	switch n.Kind {
	case yaml3.MappingNode:
		var seen map[string]bool
		if len(n.Content) > 16 {
			seen = make(map[string]bool, len(n.Content)/2)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml3.ScalarNode || k.Anchor != "" || k.Style&yaml3.TaggedStyle != 0 || (k.Style == 0 && !plainString(k.Value)) {
				return false
			}
			if seen != nil {
				if seen[k.Value] {
					return false
				}
				seen[k.Value] = true
			} else {
				for j := 0; j < i; j += 2 {
					if n.Content[j].Value == k.Value {
						return false
					}
				}
			}
			if !plainKeys(n.Content[i+1]) {
				return false
			}
		}
	case yaml3.SequenceNode, yaml3.DocumentNode:
		for _, c := range n.Content {
			if !plainKeys(c) {
				return false
			}
		}
	}
	return true
}

// plainString reports whether go-yaml v2 reads the plain scalar s as the string s: its resolver turns only
// scalars starting with a digit, sign or dot (numbers, timestamps, .inf, .nan) and the words below into other
// values.
func plainString(s string) bool {
	if s == "" || strings.ContainsRune("0123456789+-.~<", rune(s[0])) {
		return false
	}
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return false
	}
	return true
}

// decodeCRD reads a document as a v1 CRD for the playground's own analysis (costs, explain trees, versions),
// leniently: the engine's answer says whether the CRD is valid. Nil when it is not a CRD at all.
func decodeCRD(d *yamlpos.Doc) *apiextensionsv1.CustomResourceDefinition {
	if d.Root == nil {
		return nil
	}
	j := d.JSON
	if j == nil {
		var err error
		if j, err = yaml.YAMLToJSON([]byte(d.Source)); err != nil {
			return nil
		}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	dec := json.NewDecoder(bytes.NewReader(j))
	if err := dec.Decode(crd); err != nil {
		return nil
	}
	if crd.Kind != "CustomResourceDefinition" {
		return nil
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	return crd
}

// crdRewrites turn the paths of upstream's internal CRD type, in which CRD validation reports its errors, into
// the v1 layout that the text has. When every version has the same schema (or subresources, or columns, or
// selectable fields), the internal type holds one copy at the top of spec; the first version's copy is then
// where the text says it.
var crdRewrites = []struct{ from, to string }{
	{"spec.validation", "spec.versions[%d].schema"},
	{"spec.subresources", "spec.versions[%d].subresources"},
	{"spec.additionalPrinterColumns", "spec.versions[%d].additionalPrinterColumns"},
	{"spec.selectableFields", "spec.versions[%d].selectableFields"},
	{"spec.conversion.webhookClientConfig", "spec.conversion.webhook.clientConfig"},
	{"spec.conversion.conversionReviewVersions", "spec.conversion.webhook.conversionReviewVersions"},
}

// crdLocator finds upstream's CRD field paths in a CRD document.
func crdLocator(d *yamlpos.Doc) func(string) yamlpos.Result {
	return func(path string) yamlpos.Result {
		r, _ := crdResolve(d, path)
		return r
	}
}

// crdResolve finds an upstream CRD field path in a CRD document, and returns the path as the text spells it
// (the v1 layout) when it is there.
func crdResolve(d *yamlpos.Doc, path string) (yamlpos.Result, string) {
	best := d.Locate(path)
	if best.Exact {
		return best, path
	}
	if path == "spec.version" {
		if r := d.Locate("spec.versions[0].name"); r.Exact {
			return r, "spec.versions[0].name"
		}
	}
	for _, rw := range crdRewrites {
		if path != rw.from && !strings.HasPrefix(path, rw.from+".") && !strings.HasPrefix(path, rw.from+"[") {
			continue
		}
		rest := path[len(rw.from):]
		for i := 0; i < 64; i++ {
			to := rw.to
			if strings.Contains(to, "%d") {
				to = fmt.Sprintf(to, i)
			} else if i > 0 {
				break
			}
			r := d.Locate(to + rest)
			if r.Exact {
				return r, to + rest
			}
			if len(r.Found) > len(best.Found) {
				best = r
			}
			if !strings.Contains(r.Found, fmt.Sprintf("[%d]", i)) {
				break // no such version
			}
		}
	}
	return best, ""
}

// celErrorRe finds the first position of a CEL compilation error in upstream's message about a rule or a
// messageExpression ("compilation failed: ERROR: <input>:1:5: undefined field 'x'\n | self.x > 0\n | ....^").
var celErrorRe = regexp.MustCompile(`compilation failed: ERROR: <input>:(\d+):(\d+): `)

// atCELError narrows the span of a CRD diagnostic about an expression that does not compile to the
// character of the expression that CEL's error points at, when the text writes the expression verbatim. A
// folded block or a quoted scalar with escapes keeps the span of the whole field (yamlpos.Doc.InScalar says
// why): counting CEL's columns through YAML's escapes and line folding would guess. The message stays
// upstream's, whole.
func atCELError(d *yamlpos.Doc, diag *Diagnostic) {
	if !diag.Exact || !(strings.HasSuffix(diag.Field, ".rule") || strings.HasSuffix(diag.Field, ".messageExpression")) {
		return
	}
	line, col, ok := celPosition(celErrorRe, diag.Message)
	if !ok {
		return
	}
	if _, path := crdResolve(d, diag.Field); path != "" {
		if sp, ok := d.InScalar(path, line, col); ok {
			diag.Span = sp
		}
	}
}

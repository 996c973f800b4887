package playground

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apiserver/pkg/admission"

	"crdplay/playground/internal/yamlpos"
)

// AdmissionServer is an admission chain that serves its own configuration's API, admissionregistration.k8s.io
// (crdplay/policies' API): given as Options.Admission, the admission policies and bindings among the inputs
// are written through it and run on the writes of CRDs and objects, as a cluster holding them runs them.
type AdmissionServer interface {
	admission.Interface
	http.Handler
	// Attach gives the chain the engine it belongs to (which it asks for schemas and params).
	Attach(engine http.Handler)
	// Close stops the chain.
	Close()
}

// admissionPath is where the engine serves the admission configuration kinds a chain can hold.
const admissionPath = "/apis/admissionregistration.k8s.io/v1/"

// policyResource is the resource of an admission configuration kind the engine's chain holds (policies and
// their bindings, admissionregistration.k8s.io/v1), or "" for any other. Webhook configurations are not held:
// the playground calls no admission webhook.
func policyResource(apiVersion, kind string) string {
	if apiVersion != "admissionregistration.k8s.io/v1" {
		return ""
	}
	switch kind {
	case "ValidatingAdmissionPolicy":
		return "validatingadmissionpolicies"
	case "ValidatingAdmissionPolicyBinding":
		return "validatingadmissionpolicybindings"
	case "MutatingAdmissionPolicy":
		return "mutatingadmissionpolicies"
	case "MutatingAdmissionPolicyBinding":
		return "mutatingadmissionpolicybindings"
	}
	return ""
}

// appliesPolicies reports whether the session's engines run admission policies, so that a policy document is
// written rather than reported as not applied.
func (s *Session) appliesPolicies() bool { return s.opts.Admission != nil }

// applyPolicy creates the admission policy or binding of document d (of the source src), sent as body of type
// ct, through the engine, and returns its diagnostics: the API's errors placed at their fields (a CEL
// compilation error at its position in the expression), its warnings, and a note that it applies to what
// follows. resource is the document's policyResource.
func (ev *evaluation) applyPolicy(src Source, d *yamlpos.Doc, resource, ct string, body []byte) (accepted bool, r *response, diags []Diagnostic) {
	r = ev.do(http.MethodPost, admissionPath+resource, ct, "application/json", body)
	loc := docLocator(d)
	diags = append(diags, warningDiagnostics(src, d, r.warnings, loc, nil)...)
	apiVersion, kind, name := docMeta(d)
	if r.status != http.StatusCreated {
		for _, dg := range statusDiagnostics(src, d, r, SeverityError, loc) {
			atPolicyCELError(d, &dg)
			diags = append(diags, dg)
		}
		return false, r, diags
	}
	what := kind
	if name != "" {
		what += " " + name
	}
	diags = append(diags, Diagnostic{Source: src, Document: d.Index, Type: "Applied", Severity: SeverityInfo, Span: d.Start(), Exact: true,
		Message: fmt.Sprintf("applied: %s (%s) is admission configuration; the writes checked here run through it, as a cluster holding it runs them", what, apiVersion)})
	if resource == "validatingadmissionpolicies" {
		diags = append(diags, ev.typeCheckingWarnings(src, d, resource, name)...)
	}
	return true, r, diags
}

// typeCheckingWarnings are the type errors the ValidatingAdmissionPolicy status controller found in a policy's
// expressions against the schemas of what it matches (status.typeChecking.expressionWarnings: the API accepts
// such a policy, and its expressions fail at runtime), placed at their expressions.
func (ev *evaluation) typeCheckingWarnings(src Source, d *yamlpos.Doc, resource, name string) []Diagnostic {
	r := ev.do(http.MethodGet, admissionPath+resource+"/"+url.PathEscape(name), "", "application/json", nil)
	if r.status != http.StatusOK {
		return nil
	}
	var policy struct {
		Status struct {
			TypeChecking *struct {
				ExpressionWarnings []struct {
					FieldRef string `json:"fieldRef"`
					Warning  string `json:"warning"`
				} `json:"expressionWarnings"`
			} `json:"typeChecking"`
		} `json:"status"`
	}
	if json.Unmarshal(r.body, &policy) != nil || policy.Status.TypeChecking == nil {
		return nil
	}
	loc := docLocator(d)
	var out []Diagnostic
	for _, w := range policy.Status.TypeChecking.ExpressionWarnings {
		at := loc(w.FieldRef)
		dg := Diagnostic{Source: src, Document: d.Index, Field: w.FieldRef, Type: "TypeChecking", Severity: SeverityWarning, Span: at.Span, Exact: at.Exact,
			Message: "type checking (the policy's status.typeChecking): " + strings.TrimSpace(w.Warning)}
		if line, col, ok := celPosition(typeCheckErrorRe, w.Warning); ok && dg.Exact {
			if sp, ok := d.InScalar(w.FieldRef, line, col); ok {
				dg.Span = sp
			}
		}
		out = append(out, dg)
	}
	return out
}

// typeCheckErrorRe finds the position of the first CEL error in a type-checking warning ("apps/v1,
// Kind=Deployment: ERROR: <input>:1:12: undefined field ...").
var typeCheckErrorRe = regexp.MustCompile(`ERROR: <input>:(\d+):(\d+): `)

// atPolicyCELError moves a diagnostic about a policy's CEL expression (expression, messageExpression,
// valueExpression) from the field to the position in the expression that the compiler names.
func atPolicyCELError(d *yamlpos.Doc, diag *Diagnostic) {
	if !diag.Exact || !strings.HasSuffix(strings.ToLower(diag.Field), "expression") {
		return
	}
	if line, col, ok := celPosition(celErrorRe, diag.Message); ok {
		if sp, ok := d.InScalar(diag.Field, line, col); ok {
			diag.Span = sp
		}
	}
}

// celPosition is the line and column (in the expression) of the first CEL error re finds in msg.
func celPosition(re *regexp.Regexp, msg string) (line, col int, ok bool) {
	m := re.FindStringSubmatch(msg)
	if m == nil {
		return 0, 0, false
	}
	line, _ = strconv.Atoi(m[1])
	col, _ = strconv.Atoi(m[2])
	return line, col, true
}

// applyPolicies writes the admission configuration among the CRD text's documents, after its CRDs (the
// policies may match them, and may have their objects as params).
func (ev *evaluation) applyPolicies(docs []*yamlpos.Doc) {
	for _, d := range docs {
		apiVersion, kind, _ := docMeta(d)
		ct, body := docBody(d)
		_, _, diags := ev.applyPolicy(SourceCRDs, d, policyResource(apiVersion, kind), ct, body)
		ev.st.diags = append(ev.st.diags, diags...)
	}
}

// heldPolicy reports whether d is a policy or binding the session's engines hold (appliesPolicies), rather
// than a document not checked.
func (s *Session) heldPolicy(d *yamlpos.Doc) bool {
	apiVersion, kind, _ := docMeta(d)
	return s.appliesPolicies() && d.Err == nil && policyResource(apiVersion, kind) != ""
}

// applyObjectPolicy writes an admission policy or binding among the objects, sent as the objects are
// (object.body), recording the answer as the object's.
func (ev *evaluation) applyObjectPolicy(o *object) {
	ct, body := o.body()
	accepted, r, diags := ev.applyPolicy(o.src, o.doc, o.policy, ct, body)
	o.res.Operation, o.res.Method, o.res.Path = "create", http.MethodPost, admissionPath+o.policy
	o.res.Status, o.res.Accepted, o.res.Response, o.res.Warnings = r.status, accepted, rawJSON(r.body), r.warnings
	for _, d := range diags {
		ev.recordDiag(o, d)
	}
}

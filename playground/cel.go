package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"

	"crdplay/engine"
	"crdplay/playground/internal/celcost"
)

// CELInput asks for one CEL expression evaluated as an x-kubernetes-validations rule of an installed CRD
// would be (Session.CEL): the CEL scratchpad.
type CELInput struct {
	// Expression is the text, as a rule's.
	Expression string `json:"expression"`
	// CRD names the CRD (metadata.name); empty means the first one the CRD text installed.
	CRD string `json:"crd,omitempty"`
	// Version is the CRD version whose schema the rule sits in; empty means the storage version.
	Version string `json:"version,omitempty"`
	// Self is the object path of the node the rule sits on: "" for the root, "spec.tags[*]" for a list's items
	// (or a map's values), as the CEL pane's rules write their node.
	Self string `json:"self,omitempty"`
	// OptionalOldSelf is the rule's optionalOldSelf.
	OptionalOldSelf bool `json:"optionalOldSelf,omitempty"`
	// Object is the object the rule validates, one YAML or JSON document (as the objects editor holds it);
	// empty compiles the expression only. OldObject is the stored object of an update (oldSelf).
	Object    string `json:"object,omitempty"`
	OldObject string `json:"oldObject,omitempty"`
}

// CELResult is the scratchpad's answer: the expression as the API server would compile it as a rule there,
// and its value on the object.
type CELResult struct {
	// CRD and Version are those evaluated against; Selves are the nodes that the version's own rules sit on,
	// the root first, for choosing Self.
	CRD     string   `json:"crd,omitempty"`
	Version string   `json:"version,omitempty"`
	Selves  []string `json:"selves"`
	// Compatibility is the CEL environment's compatibility version, as new rules are compiled for it.
	Compatibility string `json:"compatibility,omitempty"`
	// Error says why nothing was evaluated (no CRD installed, no schema, a self the schema has not).
	Error string `json:"error,omitempty"`
	// ObjectError says why the object (or the old object) could not be read; the expression is compiled.
	ObjectError string `json:"objectError,omitempty"`
	// Scratch is the expression's compilation and values; absent with Error.
	Scratch *celcost.ScratchResult `json:"scratch,omitempty"`
}

// CEL evaluates in.Expression as a rule of a CRD the last evaluation installed (Evaluate first), in the
// environment, library, compatibility version and cost limits that the engine compiles the CRD's own rules
// with. Problems with the input are in the result; the error is only for a fault of the playground.
func (s *Session) CEL(ctx context.Context, in CELInput) (res *CELResult, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("playground: internal error: %v\n%s", p, debug.Stack())
		}
	}()
	if _, err := engine.Emulate(s.opts.EmulatedVersion); err != nil {
		return nil, err
	}
	res = &CELResult{Selves: []string{""}, Compatibility: environment.DefaultCompatibilityVersion().String()}
	st := s.st
	if st == nil {
		res.Error = "no CRD is installed: the CRD editor's text is installed when it is evaluated"
		return res, nil
	}
	if len(st.pending) > 0 {
		st.analysePending()
	}
	var c *installed
	for _, r := range st.results {
		for _, cand := range st.served {
			if cand.name == r.Name && r.Name != "" && (in.CRD == "" || in.CRD == r.Name) {
				c = cand
			}
		}
		if c != nil {
			break
		}
	}
	if c == nil {
		if in.CRD == "" {
			res.Error = "no CRD of the CRD editor was established: the Result pane says why"
		} else {
			res.Error = fmt.Sprintf("CRD %q is not established: the Result pane says why", in.CRD)
		}
		return res, nil
	}
	res.CRD, res.Version = c.name, in.Version
	if res.Version == "" {
		res.Version = c.storage
	}
	for _, self := range c.ruleFields[res.Version] {
		if !slices.Contains(res.Selves, self) {
			res.Selves = append(res.Selves, self)
		}
	}
	ps := c.runtime[res.Version]
	if ps == nil {
		res.Error = fmt.Sprintf("%s %s has no schema to put a rule in (or is not served)", c.name, res.Version)
		return res, nil
	}
	obj, err := objectOf(in.Object)
	if err != nil {
		res.ObjectError = "object: " + err.Error()
	}
	old, err := objectOf(in.OldObject)
	if err != nil && res.ObjectError == "" {
		res.ObjectError = "old object: " + err.Error()
	}
	sr, err := celcost.Scratch(ctx, ps, celcost.ScratchInput{
		Self: in.Self, Expression: in.Expression, OptionalOldSelf: in.OptionalOldSelf, Object: obj, Old: old,
	})
	if err != nil {
		res.Error = err.Error()
		return res, nil
	}
	res.Scratch = sr
	return res, nil
}

// objectOf reads one document as kubectl would send it (YAML to JSON on the client).
func objectOf(text string) (map[string]interface{}, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	j, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return nil, err
	}
	var m map[string]interface{}
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, fmt.Errorf("not an object: %v", err)
	}
	return m, nil
}

package main

// The case runner: turns the files of a case directory into HTTP requests
// against the server, and records (normalised) responses.
//
// A case directory holds:
//   crd.yaml              created first; its response is expected/00-crd.json
//   NN-<op>[-label].yaml  steps, run in file-name order
//   desc.txt              (optional) one line saying what the case covers
//
// See README.md for the list of ops and the x-oracle block.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

const (
	tableAccept    = "application/json;as=Table;v=v1;g=meta.k8s.io"
	crdAPI         = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	crdKind        = "CustomResourceDefinition"
	fieldManager   = "oracle"
	clientUA       = "oracle/" + moduleVersion
	mergePatchType = "application/merge-patch+json"
	jsonPatchType  = "application/json-patch+json"
	applyPatchType = "application/apply-patch+yaml"
)

var stepRe = regexp.MustCompile(`^(\d+)-([a-z]+)(?:[-.].*)?\.ya?ml$`)

var knownOps = map[string]bool{
	"create": true, "update": true, "status": true, "apply": true, "patch": true,
	"get": true, "list": true, "table": true, "delete": true, "scale": true,
	"request": true, "sleep": true,
}

// xOracle is an optional top-level block in a step object; it is removed
// before the object is sent.
type xOracle struct {
	Subresource       string          `json:"subresource,omitempty"`
	Query             string          `json:"query,omitempty"`
	Accept            string          `json:"accept,omitempty"`
	ContentType       string          `json:"contentType,omitempty"`
	NoResourceVersion bool            `json:"noResourceVersion,omitempty"`
	AllNamespaces     bool            `json:"allNamespaces,omitempty"`
	JSONPatch         json.RawMessage `json:"jsonPatch,omitempty"`
	Body              json.RawMessage `json:"body,omitempty"` // explicit body (e.g. DeleteOptions for delete)
	NoTable           bool            `json:"noTable,omitempty"`
}

// rawRequest is the body of a "request" step.
type rawRequest struct {
	Method      string          `json:"method"`
	Path        string          `json:"path"`
	Accept      string          `json:"accept,omitempty"`
	ContentType string          `json:"contentType,omitempty"`
	Body        json.RawMessage `json:"body,omitempty"`
	BodyText    string          `json:"bodyText,omitempty"`
}

type recordedRequest struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Accept      string `json:"accept,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	Body        any    `json:"body,omitempty"`
}

type recorded struct {
	Step     string          `json:"step"`
	Request  recordedRequest `json:"request"`
	Status   int             `json:"status"`
	Warnings []string        `json:"warnings,omitempty"`
	Body     any             `json:"body,omitempty"`
	BodyText string          `json:"bodyText,omitempty"`
}

type crdInfo struct {
	name, group, kind, plural string
	namespaced                bool
	versions                  []string // served
	storage                   string
}

type caseState struct {
	dir     string
	crds    map[string]*crdInfo // key: group/Kind
	created map[string]bool     // CRD names to clean up
}

type caseResult struct {
	steps int
	diffs []string
}

type runner struct {
	base    string
	client  *http.Client
	verbose bool
}

func newRunner(base string, verbose bool) *runner {
	return &runner{base: strings.TrimRight(base, "/"), client: &http.Client{Timeout: 60 * time.Second}, verbose: verbose}
}

type response struct {
	status   int
	warnings []string
	body     []byte
}

func (r *runner) do(method, path, accept, contentType string, body []byte) (*response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, r.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", clientUA)
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if body != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	var resp *http.Response
	var data []byte
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			// like client-go: honour 429 + Retry-After (e.g. "storage is
			// (re)initializing" right after a CRD change)
			time.Sleep(200 * time.Millisecond)
			if body != nil {
				req.Body = io.NopCloser(bytes.NewReader(body))
			}
		}
		resp, err = r.client.Do(req)
		if err != nil {
			return nil, err
		}
		data, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || attempt >= 100 {
			break
		}
		if r.verbose {
			fmt.Printf("    %s %s -> 429, retrying\n", method, path)
		}
	}
	if r.verbose {
		fmt.Printf("    %s %s -> %d\n", method, path, resp.StatusCode)
	}
	return &response{status: resp.StatusCode, warnings: resp.Header.Values("Warning"), body: data}, nil
}

func (r *runner) getJSON(path string) (int, map[string]any) {
	resp, err := r.do("GET", path, "", "", nil)
	if err != nil {
		return 0, nil
	}
	v, _ := decodeJSON(resp.body)
	m, _ := v.(map[string]any)
	return resp.status, m
}

// ---------------------------------------------------------------- helpers

func readYAMLObject(file string) (map[string]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	v, err := decodeJSON(js)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a YAML mapping", file)
	}
	return m, nil
}

func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}

func setPath(m map[string]any, val any, path ...string) {
	cur := m
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = val
}

func crdInfoFrom(obj map[string]any) *crdInfo {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return nil
	}
	names, _ := spec["names"].(map[string]any)
	ci := &crdInfo{
		name:       str(obj, "metadata", "name"),
		group:      str(spec, "group"),
		kind:       str(names, "kind"),
		plural:     str(names, "plural"),
		namespaced: str(spec, "scope") != "Cluster",
	}
	vers, _ := spec["versions"].([]any)
	for _, v := range vers {
		vm, _ := v.(map[string]any)
		if vm == nil {
			continue
		}
		if b, _ := vm["served"].(bool); b {
			ci.versions = append(ci.versions, str(vm, "name"))
		}
		if b, _ := vm["storage"].(bool); b {
			ci.storage = str(vm, "name")
		}
	}
	if ci.storage == "" && len(ci.versions) > 0 {
		ci.storage = ci.versions[0]
	}
	return ci
}

func splitAPIVersion(av string) (group, version string) {
	if i := strings.Index(av, "/"); i >= 0 {
		return av[:i], av[i+1:]
	}
	return "", av
}

// paths for an object identity
func (cs *caseState) paths(obj map[string]any, allNamespaces bool) (collection, item string, ci *crdInfo, err error) {
	kind := str(obj, "kind")
	name := str(obj, "metadata", "name")
	if kind == crdKind {
		collection = crdAPI
		if name != "" {
			item = crdAPI + "/" + name
		}
		return collection, item, nil, nil
	}
	group, version := splitAPIVersion(str(obj, "apiVersion"))
	ci = cs.crds[group+"/"+kind]
	if ci == nil {
		return "", "", nil, fmt.Errorf("no CRD known for %s/%s (kind %s)", group, version, kind)
	}
	prefix := "/apis/" + group + "/" + version
	if ci.namespaced && !allNamespaces {
		ns := str(obj, "metadata", "namespace")
		if ns == "" {
			ns = "default"
		}
		prefix += "/namespaces/" + ns
	}
	collection = prefix + "/" + ci.plural
	if name != "" {
		item = collection + "/" + name
	}
	return collection, item, ci, nil
}

// ---------------------------------------------------------------- waiting

func crdCondition(crd map[string]any, typ string) string {
	status, _ := crd["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm != nil && cm["type"] == typ {
			s, _ := cm["status"].(string)
			return s
		}
	}
	return ""
}

// waitCRDReady waits until the CRD is Established (or its names were
// rejected) and every served version is reachable and in discovery.
func (r *runner) waitCRDReady(ci *crdInfo) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, crd := r.getJSON(crdAPI + "/" + ci.name)
		if code == 200 {
			if crdCondition(crd, "Established") == "True" {
				break
			}
			if crdCondition(crd, "NamesAccepted") == "False" {
				return nil // will never be served; steps record what happens
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CRD %s not established after 30s", ci.name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, v := range ci.versions {
		for {
			code, _ := r.getJSON("/apis/" + ci.group + "/" + v + "/" + ci.plural)
			dcode, disc := r.getJSON("/apis/" + ci.group + "/" + v)
			inDisc := false
			if dcode == 200 {
				res, _ := disc["resources"].([]any)
				for _, x := range res {
					if xm, _ := x.(map[string]any); xm != nil && xm["name"] == ci.plural {
						inDisc = true
					}
				}
			}
			if code != 404 && code != 0 && inDisc {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s version %s not served after 30s (last %d, discovery %v)", ci.name, v, code, inDisc)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

func (r *runner) waitCRDGone(ci *crdInfo) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, _ := r.getJSON(crdAPI + "/" + ci.name)
		if code == 404 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CRD %s still present after 60s", ci.name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, v := range ci.versions {
		for {
			code, _ := r.getJSON("/apis/" + ci.group + "/" + v + "/" + ci.plural)
			if code == 404 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s/%s still served after CRD deletion", ci.group, ci.plural)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// deleteCRD removes a CRD and everything in it, stripping finalizers of
// custom resources that would otherwise block the deletion.
func (r *runner) deleteCRD(name string) error {
	code, crd := r.getJSON(crdAPI + "/" + name)
	if code == 404 {
		return nil
	}
	if code != 200 {
		return fmt.Errorf("GET CRD %s: %d", name, code)
	}
	ci := crdInfoFrom(crd)
	r.stripFinalizers(ci)
	if _, err := r.do("DELETE", crdAPI+"/"+name, "", "", nil); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- r.waitCRDGone(ci) }()
	for {
		select {
		case err := <-done:
			return err
		case <-time.After(2 * time.Second):
			r.stripFinalizers(ci) // objects may have been created meanwhile
		}
	}
}

func (r *runner) stripFinalizers(ci *crdInfo) {
	if ci == nil || len(ci.versions) == 0 {
		return
	}
	v := ci.versions[0]
	code, list := r.getJSON("/apis/" + ci.group + "/" + v + "/" + ci.plural)
	if code != 200 {
		return
	}
	items, _ := list["items"].([]any)
	for _, it := range items {
		im, _ := it.(map[string]any)
		md, _ := im["metadata"].(map[string]any)
		if f, _ := md["finalizers"].([]any); len(f) == 0 {
			continue
		}
		p := "/apis/" + ci.group + "/" + v
		if ns := str(md, "namespace"); ns != "" {
			p += "/namespaces/" + ns
		}
		p += "/" + ci.plural + "/" + str(md, "name")
		r.do("PATCH", p, "", mergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	}
}

// ---------------------------------------------------------------- case

type step struct {
	file, stem, op string
}

func listSteps(dir string) ([]step, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var steps []step
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		m := stepRe.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if !knownOps[m[2]] {
			return nil, fmt.Errorf("%s: unknown op %q", e.Name(), m[2])
		}
		stem := strings.TrimSuffix(strings.TrimSuffix(e.Name(), ".yaml"), ".yml")
		steps = append(steps, step{file: filepath.Join(dir, e.Name()), stem: stem, op: m[2]})
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].stem < steps[j].stem })
	return steps, nil
}

func (r *runner) runCase(dir string, check bool) (res caseResult, err error) {
	cs := &caseState{dir: dir, crds: map[string]*crdInfo{}, created: map[string]bool{}}
	steps, err := listSteps(dir)
	if err != nil {
		return res, err
	}
	crdObj, err := readYAMLObject(filepath.Join(dir, "crd.yaml"))
	if err != nil {
		return res, err
	}

	// Pre-clean CRDs this case will create (left over from an aborted run).
	pre := []string{str(crdObj, "metadata", "name")}
	for _, s := range steps {
		if o, err := readYAMLObject(s.file); err == nil && str(o, "kind") == crdKind && (s.op == "create" || s.op == "apply") {
			pre = append(pre, str(o, "metadata", "name"))
		}
	}
	for _, n := range pre {
		if err := r.deleteCRD(n); err != nil {
			return res, fmt.Errorf("pre-clean: %w", err)
		}
	}
	// Register every CRD named in the case up front so that steps can refer
	// to kinds whose CRD is created later (or never).
	if ci := crdInfoFrom(crdObj); ci != nil {
		cs.crds[ci.group+"/"+ci.kind] = ci
	}

	outputs := map[string][]byte{}
	defer func() {
		for n := range cs.created {
			if cerr := r.deleteCRD(n); cerr != nil && err == nil {
				err = fmt.Errorf("cleanup: %w", cerr)
			}
		}
		if err == nil {
			res.diffs, err = writeOrCheck(dir, outputs, check)
		}
	}()

	all := append([]step{{file: filepath.Join(dir, "crd.yaml"), stem: "00-crd", op: "create"}}, steps...)
	for _, s := range all {
		recs, err := r.runStep(cs, s)
		if err != nil {
			return res, fmt.Errorf("%s: %w", filepath.Base(s.file), err)
		}
		for name, rec := range recs {
			outputs[name] = encodeJSON(rec)
		}
		res.steps++
	}
	return res, nil
}

func writeOrCheck(dir string, outputs map[string][]byte, check bool) ([]string, error) {
	exp := filepath.Join(dir, "expected")
	if !check {
		os.RemoveAll(exp)
		if err := os.MkdirAll(exp, 0o755); err != nil {
			return nil, err
		}
		for name, data := range outputs {
			if err := os.WriteFile(filepath.Join(exp, name), data, 0o644); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	var diffs []string
	existing, _ := filepath.Glob(filepath.Join(exp, "*.json"))
	seen := map[string]bool{}
	for _, f := range existing {
		seen[filepath.Base(f)] = true
		if _, ok := outputs[filepath.Base(f)]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: expected file but no such step output", filepath.Base(f)))
		}
	}
	names := make([]string, 0, len(outputs))
	for n := range outputs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !seen[n] {
			diffs = append(diffs, fmt.Sprintf("%s: new output, no expected file", n))
			continue
		}
		want, _ := os.ReadFile(filepath.Join(exp, n))
		if !bytes.Equal(want, outputs[n]) {
			diffs = append(diffs, n+":\n"+textDiff(filepath.Join(exp, n), outputs[n]))
		}
	}
	return diffs, nil
}

func textDiff(file string, got []byte) string {
	tmp, err := os.CreateTemp("", "oracle-got-*.json")
	if err != nil {
		return "(differs)"
	}
	defer os.Remove(tmp.Name())
	tmp.Write(got)
	tmp.Close()
	out, _ := exec.Command("diff", "-u", file, tmp.Name()).CombinedOutput()
	s := string(out)
	if len(s) > 4000 {
		s = s[:4000] + "\n..."
	}
	return s
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pre)
}

// ---------------------------------------------------------------- steps

func (r *runner) record(stem string, method, path, accept, contentType string, body []byte) (*recorded, *response, error) {
	resp, err := r.do(method, path, accept, contentType, body)
	if err != nil {
		return nil, nil, err
	}
	rec := &recorded{
		Step:     stem,
		Request:  recordedRequest{Method: method, Path: path, Accept: accept, ContentType: contentType},
		Status:   resp.status,
		Warnings: resp.warnings,
	}
	if body != nil {
		if v, err := decodeJSON(body); err == nil {
			rec.Request.Body = normalize(v)
		} else {
			rec.Request.Body = string(body)
		}
	}
	if len(resp.body) > 0 {
		if v, err := decodeJSON(resp.body); err == nil {
			rec.Body = normalize(v)
		} else {
			rec.BodyText = string(resp.body)
		}
	}
	return rec, resp, nil
}

func (r *runner) currentRV(path string) string {
	code, m := r.getJSON(path)
	if code != 200 {
		return ""
	}
	return str(m, "metadata", "resourceVersion")
}

func withQuery(path, q string) string {
	if q == "" {
		return path
	}
	if strings.Contains(path, "?") {
		return path + "&" + q
	}
	return path + "?" + q
}

func (r *runner) runStep(cs *caseState, s step) (map[string]*recorded, error) {
	out := map[string]*recorded{}
	obj, err := readYAMLObject(s.file)
	if err != nil {
		return nil, err
	}

	if s.op == "request" {
		var rr rawRequest
		js, _ := json.Marshal(obj)
		if err := json.Unmarshal(js, &rr); err != nil {
			return nil, err
		}
		var body []byte
		if len(rr.Body) > 0 {
			body = rr.Body
		} else if rr.BodyText != "" {
			body = []byte(rr.BodyText)
		}
		rec, _, err := r.record(s.stem, strings.ToUpper(rr.Method), rr.Path, rr.Accept, rr.ContentType, body)
		if err != nil {
			return nil, err
		}
		out[s.stem+".json"] = rec
		return out, nil
	}
	if s.op == "sleep" {
		secs, _ := obj["seconds"].(json.Number).Float64()
		time.Sleep(time.Duration(secs * float64(time.Second)))
		return out, nil
	}

	var xo xOracle
	if raw, ok := obj["x-oracle"]; ok {
		js, _ := json.Marshal(raw)
		if err := json.Unmarshal(js, &xo); err != nil {
			return nil, fmt.Errorf("x-oracle: %w", err)
		}
		delete(obj, "x-oracle")
	}
	collection, item, ci, err := cs.paths(obj, xo.AllNamespaces)
	if err != nil {
		return nil, err
	}
	isCRD := str(obj, "kind") == crdKind
	sub := xo.Subresource
	if s.op == "status" {
		sub = "status"
	}
	if s.op == "scale" {
		sub = "scale"
	}
	target := item
	if sub != "" {
		target = item + "/" + sub
	}
	needItem := s.op != "create" && s.op != "list" && !(s.op == "table" && item == "")
	if needItem && item == "" {
		return nil, fmt.Errorf("op %s needs metadata.name", s.op)
	}
	body, _ := json.Marshal(obj)
	var method, path, accept, ctype string
	var sendBody []byte
	switch s.op {
	case "create":
		method, path, sendBody = "POST", collection, body
	case "update", "status":
		if !xo.NoResourceVersion && str(obj, "metadata", "resourceVersion") == "" {
			if rv := r.currentRV(target); rv != "" {
				setPath(obj, rv, "metadata", "resourceVersion")
				body, _ = json.Marshal(obj)
			}
		}
		method, path, sendBody = "PUT", target, body
	case "apply":
		method, path, ctype, sendBody = "PATCH", target, applyPatchType, body
		if !strings.Contains(xo.Query, "fieldManager=") {
			path = withQuery(path, "fieldManager="+fieldManager)
		}
	case "patch":
		method, path, ctype, sendBody = "PATCH", target, mergePatchType, body
		if len(xo.JSONPatch) > 0 {
			ctype, sendBody = jsonPatchType, xo.JSONPatch
		}
	case "get":
		method, path = "GET", target
	case "delete":
		method, path = "DELETE", target
		if len(xo.Body) > 0 {
			sendBody = xo.Body
		}
	case "list":
		method, path = "GET", collection
	case "table":
		method, path, accept = "GET", collection, tableAccept
		if item != "" {
			path = target
		}
	case "scale":
		spec, hasSpec := obj["spec"]
		if !hasSpec {
			method, path = "GET", target
		} else {
			scale := map[string]any{
				"apiVersion": "autoscaling/v1",
				"kind":       "Scale",
				"metadata":   map[string]any{"name": str(obj, "metadata", "name")},
				"spec":       spec,
			}
			if ns := str(obj, "metadata", "namespace"); ns != "" || (ci != nil && ci.namespaced) {
				if ns == "" {
					ns = "default"
				}
				setPath(scale, ns, "metadata", "namespace")
			}
			if !xo.NoResourceVersion {
				if rv := r.currentRV(target); rv != "" {
					setPath(scale, rv, "metadata", "resourceVersion")
				}
			}
			sendBody, _ = json.Marshal(scale)
			method, path = "PUT", target
		}
	}
	path = withQuery(path, xo.Query)
	if xo.Accept != "" {
		accept = xo.Accept
	}
	if xo.ContentType != "" {
		ctype = xo.ContentType
	}
	if sendBody != nil && ctype == "" {
		ctype = "application/json"
	}

	rec, resp, err := r.record(s.stem, method, path, accept, ctype, sendBody)
	if err != nil {
		return nil, err
	}
	out[s.stem+".json"] = rec

	if s.op == "list" && !xo.NoTable {
		trec, _, err := r.record(s.stem, method, path, tableAccept, "", nil)
		if err != nil {
			return nil, err
		}
		out[s.stem+".table.json"] = trec
	}

	// CRD lifecycle: keep track of CRDs and wait for the server to settle,
	// so the next step sees a deterministic state.
	if isCRD {
		switch {
		case (s.op == "create" && resp.status == 201) || ((s.op == "update" || s.op == "apply" || s.op == "patch") && (resp.status == 200 || resp.status == 201)):
			v, _ := decodeJSON(resp.body)
			m, _ := v.(map[string]any)
			nci := crdInfoFrom(m)
			if nci == nil {
				return nil, fmt.Errorf("cannot read CRD from response")
			}
			cs.crds[nci.group+"/"+nci.kind] = nci
			cs.created[nci.name] = true
			if err := r.waitCRDReady(nci); err != nil {
				return nil, err
			}
			if s.op != "create" {
				// the custom resource handler drops its cached storage on
				// the informer event; give it a moment.
				time.Sleep(1 * time.Second)
			}
		case s.op == "delete" && resp.status == 200:
			name := str(obj, "metadata", "name")
			nci := crdInfoFromKnown(cs, name)
			if nci != nil {
				done := make(chan error, 1)
				go func() { done <- r.waitCRDGone(nci) }()
				if err := <-done; err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

func crdInfoFromKnown(cs *caseState, name string) *crdInfo {
	for _, ci := range cs.crds {
		if ci.name == name {
			return ci
		}
	}
	return nil
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Scenario is one recorded file. Nothing with an order is sorted: CRDs in the order sent (file order of
// the release's config/crd/<channel>), objects in the order created (file order, then document order),
// checks in the order made.
type Scenario struct {
	Scenario string   `json:"scenario"` // "pair" or "history"
	Channel  string   `json:"channel"`
	Old      []string `json:"old"` // the releases applied before New, in order
	New      string   `json:"new"`
	// History is how the old cluster was built: each release of Old applied in turn (its CRDs created, or
	// updated over the previous release's).
	History []Applied `json:"history"`
	// StoredVersionsBefore are the live CRDs' status.storedVersions just before New was applied.
	StoredVersionsBefore map[string][]string `json:"storedVersionsBefore"`
	// CRDs are New's CRDs: each an update of the live one of its name, or a create.
	CRDs []CRDResult `json:"crds"`
	// Removed are the live CRDs New lacks (left as they are), in the order they were first sent.
	Removed []string `json:"removed,omitempty"`
	// Examples are the example files of the last old release, in the order their objects were created.
	Examples []string `json:"examples"`
	// Objects are the example objects of a kind an old CRD defines, in the order created.
	Objects []ObjectResult `json:"objects"`
	// NotChecked are the example documents of kinds no old CRD defines (not sent).
	NotChecked []NotChecked `json:"notChecked"`
	// Unexpected says what went wrong that should not have (the recorder exits 1 when any is recorded).
	Unexpected []string `json:"unexpected,omitempty"`

	history []*channelRelease
	next    *channelRelease
}

type Applied struct {
	Release string      `json:"release"`
	CRDs    []CRDResult `json:"crds"`
}

type CRDResult struct {
	File string `json:"file"`
	Name string `json:"name"`
	Op   string `json:"op"` // "update" or "create"
	Answer
	// Established is false when an accepted CRD was not Established and served within 30 s.
	Established *bool `json:"established,omitempty"`
}

type ObjectResult struct {
	File       string  `json:"file"`
	Doc        int     `json:"doc"`
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Namespace  string  `json:"namespace,omitempty"`
	Name       string  `json:"name"`
	Create     Answer  `json:"create"`
	OldDryRun  *Answer `json:"oldDryRun,omitempty"`
	Checks     []Check `json:"checks,omitempty"`

	ci *crdInfo
}

type Check struct {
	Version string `json:"version"`
	Op      string `json:"op"` // get, dryrun, update, status
	Answer
}

type NotChecked struct {
	File       string `json:"file"`
	Doc        int    `json:"doc"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
}

func (s *Scenario) fill() {
	for _, h := range s.history {
		s.Old = append(s.Old, h.rel.version)
	}
	s.New = s.next.rel.version
}

func (s *Scenario) fileName() string {
	return s.Scenario + "-" + s.Old[0] + "-" + s.New + ".json"
}

func (s *Scenario) checkCount() int {
	n := 0
	for _, o := range s.Objects {
		n += len(o.Checks)
	}
	return n
}

type recorder struct {
	c          *client
	unexpected []string
	// settle is the pause after a release's CRD updates (the recording's second: the custom resource handler
	// drops its cached storage on the informer's event); bench sets none, since a user's steps have no pause.
	settle time.Duration
}

func (r *recorder) unexpect(s *Scenario, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.Unexpected = append(s.Unexpected, msg)
	r.unexpected = append(r.unexpected, s.Channel+"/"+s.fileName()+": "+msg)
	fmt.Fprintf(os.Stderr, "UNEXPECTED: %s/%s: %s\n", s.Channel, s.fileName(), msg)
}

// clean deletes every CRD on the server (with its objects) and waits until they are gone.
func (r *recorder) clean() error {
	code, list, err := r.c.getJSON(crdAPI)
	if err != nil {
		return err
	}
	if code != 200 {
		return fmt.Errorf("list CRDs: %d", code)
	}
	items, _ := list["items"].([]any)
	var gone []*crdInfo
	for _, it := range items {
		m, _ := it.(map[string]any)
		ci := crdInfoFrom(m)
		if ci == nil {
			continue
		}
		resp, err := r.c.do("DELETE", crdAPI+"/"+ci.name, nil)
		if err != nil {
			return err
		}
		if resp.status != 200 && resp.status != 202 && resp.status != 404 {
			return fmt.Errorf("DELETE CRD %s: %d %s", ci.name, resp.status, resp.body)
		}
		gone = append(gone, ci)
	}
	for _, ci := range gone {
		if err := r.c.waitGone(ci); err != nil {
			return err
		}
	}
	return nil
}

// apply sends a release's CRDs: an update (PUT with the live resourceVersion) of each the server has, a
// create of the others; then waits until every accepted one is Established and served, and one second
// more after updates (as the oracle's runner: the custom resource handler drops its cached storage on the
// informer's event).
func (r *recorder) apply(s *Scenario, cr *channelRelease, live map[string]*crdInfo) ([]CRDResult, error) {
	var out []CRDResult
	updated := false
	for _, d := range cr.crds {
		name := d.str("metadata", "name")
		res := CRDResult{File: d.file, Name: name, Op: "create"}
		var resp *response
		if _, ok := live[name]; ok {
			res.Op = "update"
			code, cur, err := r.c.getJSON(crdAPI + "/" + name)
			if err != nil {
				return nil, err
			}
			if code != 200 {
				return nil, fmt.Errorf("GET CRD %s: %d", name, code)
			}
			var obj map[string]any
			if err := json.Unmarshal(d.raw, &obj); err != nil {
				return nil, err
			}
			md, _ := obj["metadata"].(map[string]any)
			md["resourceVersion"] = str(cur, "metadata", "resourceVersion")
			body, _ := json.Marshal(obj)
			if resp, err = r.c.do("PUT", crdAPI+"/"+name, body); err != nil {
				return nil, err
			}
		} else {
			var err error
			if resp, err = r.c.do("POST", crdAPI, d.raw); err != nil {
				return nil, err
			}
		}
		res.Answer = answer(resp)
		if resp.status >= 500 {
			r.unexpect(s, "%s %s of %s: %d %s", res.Op, name, cr.rel.version, resp.status, res.Message)
		}
		out = append(out, res)
		if res.ok() && res.Op == "update" {
			updated = true
		}
	}
	for i := range out {
		res := &out[i]
		if !res.ok() {
			continue
		}
		ci, err := r.c.waitReady(res.Name)
		est := err == nil
		res.Established = &est
		if err != nil {
			r.unexpect(s, "%s of %s: %v", res.Name, cr.rel.version, err)
		}
		if ci != nil {
			live[res.Name] = ci
		}
	}
	if updated {
		time.Sleep(r.settle)
	}
	return out, nil
}

func (r *recorder) run(s *Scenario) error {
	if err := r.clean(); err != nil {
		return err
	}
	live := map[string]*crdInfo{}
	for i, h := range s.history {
		res, err := r.apply(s, h, live)
		if err != nil {
			return err
		}
		for _, c := range res {
			switch {
			case !c.ok() && i == 0:
				// A release's own CRDs on an empty server.
				r.unexpect(s, "release %s created: %s %s refused: %d %s", h.rel.version, c.Op, c.Name, c.Status, c.Message)
			case !c.ok():
				// The real server's answer to a cluster that followed the releases (recorded in history: the
				// CRD stays as it was, as in such a cluster); said, not an error.
				fmt.Fprintf(os.Stderr, "NOTE: %s/%s: release %s applied over %s: %s %s refused: %d %s\n", s.Channel, s.fileName(),
					h.rel.version, s.history[i-1].rel.version, c.Op, c.Name, c.Status, c.Message)
			}
		}
		s.History = append(s.History, Applied{Release: h.rel.version, CRDs: res})
	}
	last := s.history[len(s.history)-1]

	// The last old release's examples: each document of a kind a live CRD defines is created.
	kinds := map[string]*crdInfo{}
	for _, ci := range live {
		kinds[ci.group+"/"+ci.kind] = ci
	}
	s.Examples = last.examples
	s.NotChecked = []NotChecked{}
	for _, d := range last.docs {
		av, kind := d.str("apiVersion"), d.str("kind")
		group, version := "", av
		if i := strings.Index(av, "/"); i >= 0 {
			group, version = av[:i], av[i+1:]
		}
		ci := kinds[group+"/"+kind]
		if ci == nil {
			s.NotChecked = append(s.NotChecked, NotChecked{File: d.file, Doc: d.idx, APIVersion: av, Kind: kind, Name: d.str("metadata", "name")})
			continue
		}
		o := ObjectResult{File: d.file, Doc: d.idx, APIVersion: av, Kind: kind, Name: d.str("metadata", "name"), ci: ci}
		if ci.namespaced {
			o.Namespace = d.str("metadata", "namespace")
			if o.Namespace == "" {
				o.Namespace = "default"
			}
		}
		resp, err := r.c.do("POST", ci.path(version, o.Namespace, "")+"?fieldValidation=Strict", d.raw)
		if err != nil {
			return err
		}
		o.Create = answer(resp)
		if resp.status >= 500 {
			r.unexpect(s, "create %s %s/%s: %d %s", kind, o.Namespace, o.Name, resp.status, o.Create.Message)
		}
		if o.Create.ok() {
			v, _ := decodeJSON(resp.body)
			m, _ := v.(map[string]any)
			if n := str(m, "metadata", "name"); n != "" {
				o.Name = n
			}
		}
		s.Objects = append(s.Objects, o)
	}

	// Before the upgrade: each stored object sent again as new, in its own version, under the old CRD.
	for i := range s.Objects {
		o := &s.Objects[i]
		if !o.Create.ok() {
			continue
		}
		_, version, _ := strings.Cut(o.APIVersion, "/")
		path := o.ci.path(version, o.Namespace, o.Name)
		g, err := r.c.do("GET", path, nil)
		if err != nil {
			return err
		}
		if g.status != 200 {
			r.unexpect(s, "GET %s before the upgrade: %d", path, g.status)
			a := answer(g)
			o.OldDryRun = &a
			continue
		}
		a, err := r.dryRun(o.ci, version, o.Namespace, o.Name, g.body)
		if err != nil {
			return err
		}
		o.OldDryRun = &a
	}

	s.StoredVersionsBefore = map[string][]string{}
	for name := range live {
		code, crd, err := r.c.getJSON(crdAPI + "/" + name)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("GET CRD %s: %d", name, code)
		}
		st, _ := crd["status"].(map[string]any)
		sv, _ := st["storedVersions"].([]any)
		list := []string{}
		for _, x := range sv {
			list = append(list, fmt.Sprint(x))
		}
		s.StoredVersionsBefore[name] = list
	}

	// The upgrade.
	oldNames := map[string]bool{}
	for n := range live {
		oldNames[n] = true
	}
	res, err := r.apply(s, s.next, live)
	if err != nil {
		return err
	}
	s.CRDs = res
	for _, c := range res {
		delete(oldNames, c.Name)
	}
	seen := map[string]bool{}
	for _, h := range s.History {
		for _, c := range h.CRDs {
			if oldNames[c.Name] && !seen[c.Name] {
				seen[c.Name] = true
				s.Removed = append(s.Removed, c.Name)
			}
		}
	}

	// The checks, against each object's CRD as the server now has it.
	for i := range s.Objects {
		o := &s.Objects[i]
		if !o.Create.ok() {
			continue
		}
		code, crd, err := r.c.getJSON(crdAPI + "/" + o.ci.name)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("GET CRD %s: %d", o.ci.name, code)
		}
		ci := crdInfoFrom(crd)
		for _, v := range ci.served {
			path := ci.path(v, o.Namespace, o.Name)
			g, err := r.c.do("GET", path, nil)
			if err != nil {
				return err
			}
			o.Checks = append(o.Checks, Check{Version: v, Op: "get", Answer: answer(g)})
			r.flag5xx(s, o, v, "get", g)
			if g.status != 200 {
				continue
			}
			dr, err := r.dryRun(ci, v, o.Namespace, o.Name, g.body)
			if err != nil {
				return err
			}
			o.Checks = append(o.Checks, Check{Version: v, Op: "dryrun", Answer: dr})
			p, err := r.c.do("PUT", path+"?fieldValidation=Strict", g.body)
			if err != nil {
				return err
			}
			o.Checks = append(o.Checks, Check{Version: v, Op: "update", Answer: answer(p)})
			r.flag5xx(s, o, v, "update", p)
			if ci.status[v] {
				body := g.body
				if p.status == 200 {
					body = p.body
				}
				sp, err := r.c.do("PUT", path+"/status?fieldValidation=Strict", body)
				if err != nil {
					return err
				}
				o.Checks = append(o.Checks, Check{Version: v, Op: "status", Answer: answer(sp)})
				r.flag5xx(s, o, v, "status", sp)
			}
		}
	}
	return nil
}

func (r *recorder) flag5xx(s *Scenario, o *ObjectResult, v, op string, resp *response) {
	if resp.status >= 500 {
		r.unexpect(s, "%s %s %s/%s in %s: %d %s", op, o.Kind, o.Namespace, o.Name, v, resp.status, answer(resp).Message)
	}
}

// dryRun sends what a GET returned as a new object with dryRun=All: metadata reduced to generateName
// "<name>-", namespace, labels and annotations.
func (r *recorder) dryRun(ci *crdInfo, version, ns, name string, read []byte) (Answer, error) {
	v, err := decodeJSON(read)
	m, _ := v.(map[string]any)
	if err != nil || m == nil {
		return Answer{}, fmt.Errorf("dry run of %s: the GET's answer is not an object", name)
	}
	md, _ := m["metadata"].(map[string]any)
	keep := map[string]any{"generateName": name + "-"}
	for _, k := range []string{"namespace", "labels", "annotations"} {
		if x, ok := md[k]; ok {
			keep[k] = x
		}
	}
	m["metadata"] = keep
	body, err := json.Marshal(m)
	if err != nil {
		return Answer{}, err
	}
	resp, err := r.c.do("POST", ci.path(version, ns, "")+"?dryRun=All", body)
	if err != nil {
		return Answer{}, err
	}
	return answer(resp), nil
}

// write writes the scenario as JSON: one line per CRD, object and document not checked.
func (s *Scenario) write(out string) error {
	dir := filepath.Join(out, s.Channel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := func(v any) string {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		e.Encode(v)
		return strings.TrimSuffix(b.String(), "\n")
	}
	field := func(key string, v any, last bool) {
		fmt.Fprintf(&buf, "  %q: %s", key, enc(v))
		if !last {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	list := func(key string, n int, item func(int) any, last bool) {
		if n == 0 {
			fmt.Fprintf(&buf, "  %q: []", key)
		} else {
			fmt.Fprintf(&buf, "  %q: [\n", key)
			for i := 0; i < n; i++ {
				buf.WriteString("    " + enc(item(i)))
				if i < n-1 {
					buf.WriteByte(',')
				}
				buf.WriteByte('\n')
			}
			buf.WriteString("  ]")
		}
		if !last {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("{\n")
	field("scenario", s.Scenario, false)
	field("channel", s.Channel, false)
	field("old", s.Old, false)
	field("new", s.New, false)
	list("history", len(s.History), func(i int) any { return s.History[i] }, false)
	field("storedVersionsBefore", s.StoredVersionsBefore, false)
	list("crds", len(s.CRDs), func(i int) any { return s.CRDs[i] }, false)
	if len(s.Removed) > 0 {
		field("removed", s.Removed, false)
	}
	list("examples", len(s.Examples), func(i int) any { return s.Examples[i] }, false)
	list("objects", len(s.Objects), func(i int) any { return s.Objects[i] }, false)
	if len(s.Unexpected) > 0 {
		list("notChecked", len(s.NotChecked), func(i int) any { return s.NotChecked[i] }, false)
		list("unexpected", len(s.Unexpected), func(i int) any { return s.Unexpected[i] }, true)
	} else {
		list("notChecked", len(s.NotChecked), func(i int) any { return s.NotChecked[i] }, true)
	}
	buf.WriteString("}\n")
	var check any
	if err := json.Unmarshal(buf.Bytes(), &check); err != nil {
		return fmt.Errorf("%s: the JSON written does not parse: %v", s.fileName(), err)
	}
	return os.WriteFile(filepath.Join(dir, s.fileName()), buf.Bytes(), 0o644)
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"
)

const (
	crdAPI    = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	userAgent = "crdplay-releases/v1"
)

type client struct {
	base    string
	http    *http.Client
	verbose bool
}

func newClient(base string, verbose bool) *client {
	return &client{base: strings.TrimRight(base, "/"), http: &http.Client{Timeout: 60 * time.Second}, verbose: verbose}
}

type response struct {
	status   int
	warnings []string
	body     []byte
}

// do sends a request; a 429 with Retry-After ("storage is (re)initializing" right after a CRD change) is
// retried, as client-go and the oracle's runner retry it. A transport error is returned: the recording stops.
func (c *client) do(method, path string, body []byte) (*response, error) {
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(method, c.base+path, rd)
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", userAgent)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "" && attempt < 100 {
			continue
		}
		if c.verbose {
			fmt.Printf("    %s %s -> %d\n", method, path, resp.StatusCode)
		}
		return &response{status: resp.StatusCode, warnings: resp.Header.Values("Warning"), body: data}, nil
	}
}

func (c *client) getJSON(path string) (int, map[string]any, error) {
	r, err := c.do("GET", path, nil)
	if err != nil {
		return 0, nil, err
	}
	v, _ := decodeJSON(r.body)
	m, _ := v.(map[string]any)
	return r.status, m, nil
}

// Answer is what the API answered: the HTTP status, and for a refusal the Status's message and causes; the
// Warning headers always.
type Answer struct {
	Status   int      `json:"status"`
	Message  string   `json:"message,omitempty"`
	Causes   []Cause  `json:"causes,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

type Cause struct {
	Field   string `json:"field,omitempty"`
	Type    string `json:"type,omitempty"`
	Message string `json:"message,omitempty"`
}

func (a Answer) ok() bool { return a.Status >= 200 && a.Status < 300 }

// answer reads a response. Only what the oracle's normaliser changes is changed: revision=N in messages,
// and causes sorted by (field, message) with the "is invalid: [...]" message rebuilt in that order.
func answer(r *response) Answer {
	a := Answer{Status: r.status, Warnings: r.warnings}
	if a.ok() {
		return a
	}
	v, err := decodeJSON(r.body)
	m, _ := v.(map[string]any)
	if err != nil || m == nil || m["kind"] != "Status" {
		a.Message = revisionRe.ReplaceAllString(strings.TrimSpace(string(r.body)), "revision=<revision>")
		return a
	}
	sortCauses(m)
	a.Message = revisionRe.ReplaceAllString(str(m, "message"), "revision=<revision>")
	details, _ := m["details"].(map[string]any)
	causes, _ := details["causes"].([]any)
	for _, x := range causes {
		xm, _ := x.(map[string]any)
		a.Causes = append(a.Causes, Cause{
			Field:   str(xm, "field"),
			Type:    str(xm, "reason"),
			Message: revisionRe.ReplaceAllString(str(xm, "message"), "revision=<revision>"),
		})
	}
	return a
}

func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// The oracle's normaliser (../../../shared/oracle/normalize.go), the part that touches Status messages.

var revisionRe = regexp.MustCompile(`revision=\d+`)

func sortCauses(m map[string]any) {
	details, _ := m["details"].(map[string]any)
	causes, _ := details["causes"].([]any)
	if len(causes) < 2 {
		return
	}
	type c struct {
		field, msg string
		raw        any
	}
	cs := make([]c, 0, len(causes))
	for _, x := range causes {
		xm, ok := x.(map[string]any)
		if !ok {
			return
		}
		f, _ := xm["field"].(string)
		msg, _ := xm["message"].(string)
		cs = append(cs, c{f, msg, x})
	}
	join := func(list []c) string {
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = x.field + ": " + x.msg
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	before := join(cs)
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].field != cs[j].field {
			return cs[i].field < cs[j].field
		}
		return cs[i].msg < cs[j].msg
	})
	for i := range cs {
		causes[i] = cs[i].raw
	}
	if msg, ok := m["message"].(string); ok && strings.HasSuffix(msg, before) {
		m["message"] = strings.TrimSuffix(msg, before) + join(cs)
	}
}

// crdInfo is what a CRD (as the server answers it) says about its resources.
type crdInfo struct {
	name, group, kind, plural string
	namespaced                bool
	versions                  []string // every version, spec.versions order
	served                    []string // served versions, spec.versions order
	status                    map[string]bool
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
		status:     map[string]bool{},
	}
	vers, _ := spec["versions"].([]any)
	for _, v := range vers {
		vm, _ := v.(map[string]any)
		if vm == nil {
			continue
		}
		name := str(vm, "name")
		ci.versions = append(ci.versions, name)
		if b, _ := vm["served"].(bool); b {
			ci.served = append(ci.served, name)
		}
		sub, _ := vm["subresources"].(map[string]any)
		if _, ok := sub["status"]; ok {
			ci.status[name] = true
		}
	}
	return ci
}

func (ci *crdInfo) path(version, ns, name string) string {
	p := "/apis/" + ci.group + "/" + version
	if ci.namespaced {
		p += "/namespaces/" + ns
	}
	p += "/" + ci.plural
	if name != "" {
		p += "/" + name
	}
	return p
}

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

// waitReady waits, as the oracle's runner does, until the CRD is Established and every served version
// answers and is in its group version's discovery; it returns the CRD as the server then has it.
func (c *client) waitReady(name string) (*crdInfo, error) {
	deadline := time.Now().Add(30 * time.Second)
	var ci *crdInfo
	for {
		code, crd, err := c.getJSON(crdAPI + "/" + name)
		if err != nil {
			return nil, err
		}
		if code == 200 {
			ci = crdInfoFrom(crd)
			if crdCondition(crd, "Established") == "True" {
				break
			}
			if crdCondition(crd, "NamesAccepted") == "False" {
				return ci, fmt.Errorf("CRD %s: NamesAccepted=False", name)
			}
		}
		if time.Now().After(deadline) {
			return ci, fmt.Errorf("CRD %s not Established after 30s", name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, v := range ci.served {
		for {
			code, _, err := c.getJSON("/apis/" + ci.group + "/" + v + "/" + ci.plural + "?limit=1")
			if err != nil {
				return ci, err
			}
			dcode, disc, err := c.getJSON("/apis/" + ci.group + "/" + v)
			if err != nil {
				return ci, err
			}
			inDisc := false
			if dcode == 200 {
				res, _ := disc["resources"].([]any)
				for _, x := range res {
					if xm, _ := x.(map[string]any); xm != nil && xm["name"] == ci.plural {
						inDisc = true
					}
				}
			}
			if code != 404 && inDisc {
				break
			}
			if time.Now().After(deadline) {
				return ci, fmt.Errorf("CRD %s version %s not served after 30s (last %d, discovery %v)", name, v, code, inDisc)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return ci, nil
}

// waitGone waits until a deleted CRD and its endpoints are gone.
func (c *client) waitGone(ci *crdInfo) error {
	deadline := time.Now().Add(120 * time.Second)
	for {
		code, _, err := c.getJSON(crdAPI + "/" + ci.name)
		if err != nil {
			return err
		}
		if code == 404 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CRD %s still present after 120s", ci.name)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, v := range ci.served {
		for {
			code, _, err := c.getJSON("/apis/" + ci.group + "/" + v + "/" + ci.plural + "?limit=1")
			if err != nil {
				return err
			}
			if code == 404 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s/%s still served after its CRD's deletion", ci.group, ci.plural)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

package playground

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"crdplay/playground/internal/crddiff"
)

// The verdict of an upgrade and the way out of each problem. A cluster refuses an upgrade in three ways: the
// CRD update itself, a read or write of a stored object, or a stored object sent again as new (which
// ratcheting does not let through). Only those make the verdict fail; static findings no stored object shows
// are warnings.

// storedVersionCause reports whether a cause's field is status.storedVersions (the API's refusal of a CRD
// that drops a version objects may still be stored in).
func storedVersionCause(field string) bool { return strings.HasPrefix(field, "status.storedVersions") }

// storedVersionRefusal reports whether a refusal of a CRD update is for a stored version it drops.
func storedVersionRefusal(st *statusBody) bool {
	if st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if storedVersionCause(c.Field) {
			return true
		}
	}
	return false
}

// storageVersion is the storage version of a CRD, or "".
func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	if crd == nil {
		return ""
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// migrationFix is the next step for a version removed while stored: the storage migration of the "Versions
// in CustomResourceDefinitions" page ("Upgrade existing objects to a new stored version").
func migrationFix(name string, old *apiextensionsv1.CustomResourceDefinition) string {
	storage := storageVersion(old)
	if storage == "" {
		storage = "the storage version"
	}
	return fmt.Sprintf("keep the version in spec.versions (served: false is enough) until a storage migration has run: "+
		"rewrite every stored object in %s (read each and write it back unchanged, e.g. with kube-storage-version-migrator), "+
		"then remove the old versions from status.storedVersions (kubectl patch crd %s --subresource=status --type=merge "+
		`-p '{"status":{"storedVersions":["%s"]}}'); only then drop it (Kubernetes docs: "Versions in CustomResourceDefinitions", `+
		`"Upgrade existing objects to a new stored version")`, storage, name, storage)
}

// findingFix is the next step for a finding, where upstream's docs name one.
func findingFix(p *pair, f crddiff.Finding, refuses bool) string {
	switch f.Rule {
	case "storedVersionRemoval":
		return migrationFix(p.name, p.oldLive)
	case "scope":
		return "a CRD's scope cannot change once established: serve the kind under a new CRD (another group or plural) and move the objects"
	case "type":
		return "change a field's type in a new version with a conversion webhook, not in place: stored objects keep the old type"
	}
	if !refuses {
		if f.Rule == "default" {
			return ""
		}
		return ""
	}
	switch f.Rule {
	case "required":
		return fmt.Sprintf("give %s a default, so that stored objects and clients that do not set it get one, or keep it optional", f.ObjectPath)
	case "enum":
		return "keep the removed enum values until no stored object holds them: change those objects first, then remove the values"
	}
	return fmt.Sprintf("ratcheting lets the stored objects' unchanged updates through, but the next edit of %s is refused: change the objects' values first, or relax the rule", orRoot(f.ObjectPath))
}

func orRoot(path string) string {
	if path == "" {
		return "the object"
	}
	return path
}

// migrate runs the storage migration a pair's refusal asks for, through the API: every stored object of the
// CRD read and written back in the storage version, status.storedVersions set to the storage version alone,
// then the new CRD sent again (Input.Migrate). What the retry answers replaces the refusal for the checks.
func (u *upgrader) migrate(p *pair) {
	ev := u.ev
	old := p.old
	if old == nil || old.c == nil {
		return
	}
	storage := old.c.storage
	// A retry not sent (the migration failed) keeps status 0.
	m := Migration{CRD: p.name, From: []string{}, To: storage, Failed: []string{}, Retry: UpgradeCRD{Name: p.name, Warnings: []string{}}}
	if p.oldLive != nil && p.oldLive.Status.StoredVersions != nil {
		m.From = p.oldLive.Status.StoredVersions
	}
	for _, o := range p.stored {
		path := old.c.path(storage, o.ns, o.res.Name)
		g := ev.do(http.MethodGet, path, "", "application/json", nil)
		r := g
		if g.status == http.StatusOK {
			r = ev.do(http.MethodPut, path, "application/json", "application/json", g.body)
		}
		if r.status != http.StatusOK {
			m.Failed = append(m.Failed, objectName(o)+": "+statusMessage(r))
			continue
		}
		m.Rewritten++
	}
	g := ev.do(http.MethodGet, crdsPath+"/"+p.name, "", "application/json", nil)
	var crd map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(g.body))
	dec.UseNumber()
	if g.status != http.StatusOK || dec.Decode(&crd) != nil || len(m.Failed) > 0 {
		u.rep.Migrations = append(u.rep.Migrations, m)
		return
	}
	st, _ := crd["status"].(map[string]interface{})
	if st == nil {
		st = map[string]interface{}{}
		crd["status"] = st
	}
	st["storedVersions"] = []interface{}{storage}
	body, _ := json.Marshal(crd)
	sr := ev.do(http.MethodPut, crdsPath+"/"+p.name+"/status", "application/json", "application/json", body)
	m.Status = sr.status
	if sr.status == http.StatusOK {
		res := CRDResult{Name: p.name, Warnings: []string{}, Served: []string{}, Versions: []VersionInfo{}}
		n := len(ev.st.diags)
		r, _, c := u.putCRD(p.name, p.doc, nil, &res)
		ev.st.diags = ev.st.diags[:n]
		m.Retry = UpgradeCRD{Name: p.name, Change: "updated", Source: SourceCRDs, Document: p.doc.Index, Line: docLine(p.doc),
			Status: r.status, Accepted: r.status == http.StatusOK, Warnings: r.warnings}
		if m.Retry.Warnings == nil {
			m.Retry.Warnings = []string{}
		}
		if !m.Retry.Accepted {
			m.Retry.Error = rawJSON(r.body)
		} else {
			p.newC = c
			if nl := (&apiextensionsv1.CustomResourceDefinition{}); json.Unmarshal(r.body, nl) == nil {
				p.newLive = nl
			}
		}
	}
	u.rep.Migrations = append(u.rep.Migrations, m)
}

// objectName is "namespace/name", or "name" for a cluster-scoped object.
func objectName(o *object) string {
	if o.ns != "" {
		return o.ns + "/" + o.res.Name
	}
	return o.res.Name
}

// verdict sums the upgrade up in one line: refused by the API, breaks N stored objects, safe with warnings,
// or safe.
func (u *upgrader) verdict() {
	rep := u.rep
	refused, sent := 0, 0
	for _, c := range rep.CRDs {
		if c.Change == "removed" {
			continue
		}
		sent++
		if c.Status != 0 && !c.Accepted {
			refused++
		}
	}
	broken := map[int]bool{}
	warnings, errors, notApplied := 0, 0, 0
	for _, d := range u.ev.res.Diagnostics {
		switch d.Severity {
		case SeverityError:
			errors++
			if d.Source == SourceObjects {
				broken[d.Document*1_000_000+d.Item] = true
			}
		case SeverityWarning:
			warnings++
			if d.Type == "NotChecked" {
				notApplied++ // admission configuration (notChecked)
			}
		}
	}
	brokenStored := 0
	for _, o := range u.stored {
		if broken[o.doc.Index*1_000_000+o.item] {
			brokenStored++
		}
	}
	switch {
	case refused > 0:
		rep.Verdict = "refused"
		rep.Summary = fmt.Sprintf("refused by the API: %d of %d CRDs", refused, sent)
		if len(rep.Migrations) > 0 {
			ok := 0
			for _, m := range rep.Migrations {
				if m.Retry.Accepted {
					ok++
				}
			}
			rep.Summary += fmt.Sprintf(" (%d accepted after the storage migration)", ok)
		}
	case brokenStored > 0:
		rep.Verdict = "breaks"
		rep.Summary = fmt.Sprintf("breaks %s", plural(brokenStored, "stored object"))
	case errors > 0:
		// Errors that are neither a refused CRD nor a stored object's: the input's own (a CRD text that
		// does not parse, an old CRD the API refuses).
		rep.Verdict = "breaks"
		rep.Summary = "not checked in full: " + plural(errors, "error")
	case warnings > 0:
		rep.Verdict = "warnings"
		rep.Summary = "safe with " + plural(warnings, "warning")
	default:
		rep.Verdict = "safe"
		rep.Summary = "safe"
	}
	if notApplied > 0 {
		// The verdict is a cluster's without the admission configuration the inputs hold, which could refuse
		// or change the writes: said with it, as crdplay check's verdict line says it.
		rep.Summary += fmt.Sprintf("; %s not applied", plural(notApplied, "admission configuration document"))
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

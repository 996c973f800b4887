package playground

import (
	"context"
	"strings"
	"sync"
	"testing"
)

const crontabObject = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: my-new-cron-object\nspec:\n  cronSpec: \"* * * * */5\"\n  image: my-awesome-cron-image\n"

func TestSessionCachesCRDsAndResetsObjects(t *testing.T) {
	crd := readText(t, "basic-crontab", "crd.yaml")
	s := NewSession(Options{})
	first := evaluate(t, s, Input{CRDs: &crd, Objects: crontabObject})
	if first.CRDCached || first.SchemasOmitted || first.CRDs[0].Versions[0].Schema == nil {
		t.Fatalf("first evaluation: cached=%v omitted=%v", first.CRDCached, first.SchemasOmitted)
	}
	for i := 0; i < 3; i++ {
		// The same name every time: the previous evaluation's object must be gone (no 409).
		res := evaluate(t, s, Input{Objects: crontabObject, KnownCRDRevision: first.CRDRevision})
		if !res.CRDCached || !res.SchemasOmitted || res.CRDs[0].Versions[0].Schema != nil || res.CRDRevision != first.CRDRevision {
			t.Fatalf("evaluation %d: cached=%v omitted=%v revision %s/%s", i, res.CRDCached, res.SchemasOmitted, res.CRDRevision, first.CRDRevision)
		}
		if o := res.Objects[0]; o.Status != 201 {
			t.Fatalf("evaluation %d: create answered %d: %s", i, o.Status, o.Response)
		}
		if len(res.Tables) != 1 || len(res.Tables[0].Rows) != 1 {
			t.Errorf("evaluation %d: the table should list the one object: %+v", i, res.Tables)
		}
	}
	// The same text passed again is cached too; a different revision gets the schemas.
	res := evaluate(t, s, Input{CRDs: &crd, Objects: crontabObject, KnownCRDRevision: "stale"})
	if !res.CRDCached || res.SchemasOmitted {
		t.Errorf("same text: cached=%v omitted=%v", res.CRDCached, res.SchemasOmitted)
	}
	// A changed CRD is installed afresh: here its schema forbids what was fine before.
	tight := strings.Replace(crd, "                image:\n                  type: string\n", "                image:\n                  type: string\n                  maxLength: 3\n", 1)
	if tight == crd {
		t.Fatal("the CRD text did not change")
	}
	res = evaluate(t, s, Input{CRDs: &tight, Objects: crontabObject})
	if res.CRDCached || res.CRDRevision == first.CRDRevision || res.Objects[0].Status != 422 {
		t.Errorf("changed CRD: cached=%v revision %s status %d", res.CRDCached, res.CRDRevision, res.Objects[0].Status)
	}
	// No CRD text at all: objects have nothing to go to.
	empty := ""
	res = evaluate(t, s, Input{CRDs: &empty, Objects: crontabObject})
	if len(res.CRDs) != 0 || res.Objects[0].Status != 0 || len(res.Diagnostics) != 1 || res.Diagnostics[0].Type != "NoKindMatch" {
		t.Errorf("no CRDs: %+v %+v", res.Objects, res.Diagnostics)
	}
}

func TestSessionConcurrentUse(t *testing.T) {
	crd := readText(t, "basic-crontab", "crd.yaml")
	s := NewSession(Options{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Evaluate(context.Background(), Input{CRDs: &crd, Objects: crontabObject})
			if err != nil || res.Objects[0].Status != 201 {
				t.Errorf("err %v, %+v", err, res)
			}
		}()
	}
	wg.Wait()
}

func TestInputErrors(t *testing.T) {
	s := NewSession(Options{})
	if _, err := s.Evaluate(context.Background(), Input{Mode: "replace"}); err == nil {
		t.Error("an unknown mode is the caller's mistake")
	}
	if _, err := s.Evaluate(context.Background(), Input{FieldValidation: "strict"}); err == nil {
		t.Error("fieldValidation is case-sensitive, as the API's")
	}
}

func TestRuntimeCostAndTrace(t *testing.T) {
	crd := readText(t, "cel-basic", "crd.yaml")
	obj, _ := stepText(t, "cel-basic", "04-create-valid.yaml")
	res := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: obj, Trace: true})
	o := res.Objects[0]
	if o.Status != 201 || o.CEL == nil || o.CEL.Used <= 0 || o.CEL.Budget != res.Limits.RuntimeBudget {
		t.Errorf("status %d, cel %+v", o.Status, o.CEL)
	}
	// The trace: the CRD's POST and GET, discovery, the object's POST, the table (its v1 read is the POST's answer).
	var got []string
	for _, e := range res.Exchanges {
		got = append(got, e.Method+" "+e.Path)
	}
	want := []string{
		"POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
		"GET /apis/stable.example.com",
		"POST /apis/stable.example.com/v1/namespaces/default/crontabs",
		"GET /apis/stable.example.com/v1/crontabs",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exchanges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

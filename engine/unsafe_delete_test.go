package engine_test

import (
	"context"
	"strings"
	"testing"

	"crdplay/engine/storage"
)

// TestUnsafeDelete: DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential (feature
// AllowUnsafeMalformedObjectDeletion, on by default in 1.37) deletes only an object that cannot be read from
// storage, without running its finalizers, and answers with the Status the DELETE handler builds when the
// corrupt-object deleter returns no object; a readable object is refused with a 409 and kept (recorded from the
// real 1.37 server in testdata/versions/1.37/delete-ignore-read-error), and DELETECOLLECTION refuses the option
// (k8s.io/apiserver pkg/endpoints/handlers/delete.go).
func TestUnsafeDelete(t *testing.T) {
	const (
		objects = "/apis/stable.example.com/v1/namespaces/default/crontabs"
		key     = "/registry/apiextensions.kubernetes.io/stable.example.com/crontabs/default/"
		unsafe  = `{"kind":"DeleteOptions","apiVersion":"v1","ignoreStoreReadErrorWithClusterBreakingPotential":true}`
		dryRun  = `{"kind":"DeleteOptions","apiVersion":"v1","ignoreStoreReadErrorWithClusterBreakingPotential":true,"dryRun":["All"]}`
	)
	for _, tc := range []struct {
		name, method, path, body string
		// stored is what the object's key holds before the request; empty for nothing.
		stored string
		code   int
		want   string
		kept   bool
	}{
		{"unreadable", "DELETE", objects + "/bad", unsafe, "{not json", 200,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"bad","kind":"CronTab"},"code":200}`, false},
		{"unreadable, dry run", "DELETE", objects + "/bad", dryRun, "{not json", 200,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"bad","kind":"CronTab"},"code":200}`, true},
		{"readable", "DELETE", objects + "/good", unsafe, string(cronTab("good", "")), 409,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on crontabs.stable.example.com \"good\": StorageError: invalid object, Code: 4, Key: /registry/apiextensions.kubernetes.io/stable.example.com/crontabs/default/good, ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage","reason":"Conflict","details":{"name":"good","group":"stable.example.com","kind":"crontabs"},"code":409}`, true},
		{"missing", "DELETE", objects + "/none", unsafe, "", 404,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"crontabs.stable.example.com \"none\" not found","reason":"NotFound","details":{"name":"none","group":"stable.example.com","kind":"crontabs"},"code":404}`, false},
		{"collection", "DELETE", objects, unsafe, "{not json", 422,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"DeleteOptions.meta.k8s.io \"\" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"DeleteOptions","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option","field":"ignoreStoreReadErrorWithClusterBreakingPotential"}]},"code":422}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.NewMemory()
			h := newCronTabEngine(t, st)
			name := tc.path[strings.LastIndex(tc.path, "/")+1:]
			if tc.path == objects {
				name = "bad"
			}
			ctx := context.Background()
			if tc.stored != "" {
				if _, err := st.Create(ctx, key+name, []byte(tc.stored)); err != nil {
					t.Fatal(err)
				}
			}
			rec := do(h, tc.method, tc.path, "application/json", []byte(tc.body))
			if rec.Code != tc.code || strings.TrimSpace(rec.Body.String()) != tc.want {
				t.Errorf("%s %s: %d %s\nwant %d %s", tc.method, tc.path, rec.Code, rec.Body, tc.code, tc.want)
			}
			if _, err := st.Get(ctx, key+name); tc.stored != "" && (err == nil) != tc.kept {
				t.Errorf("the object is kept: %v, want %v", err == nil, tc.kept)
			}
		})
	}
}

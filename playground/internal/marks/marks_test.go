package marks

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	decode := func(s string) interface{} {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v interface{}
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name          string
		input, stored string
		opts          Options
		want          []string // "kind path"
	}{
		{"identical", `{"spec":{"a":1}}`, `{"spec":{"a":1}}`, Options{}, nil},
		{"pruned and defaulted", `{"spec":{"x":1,"keep":"k"}}`, `{"spec":{"keep":"k","d":"def"}}`, Options{},
			[]string{"defaulted spec.d", "pruned spec.x"}},
		{"null replaced by a default", `{"spec":{"n":null}}`, `{"spec":{"n":5}}`, Options{}, []string{"defaulted spec.n"}},
		{"null pruned", `{"spec":{"n":null}}`, `{"spec":{}}`, Options{}, []string{"pruned spec.n"}},
		{"numbers compare by value", `{"spec":{"f":1.0}}`, `{"spec":{"f":1}}`, Options{}, nil},
		{"inside lists", `{"l":[{"a":1,"x":2},{"a":2}]}`, `{"l":[{"a":1},{"a":2,"d":true}]}`, Options{},
			[]string{"pruned l[0].x", "defaulted l[1].d"}},
		{"server metadata", `{"metadata":{"name":"n"}}`, `{"metadata":{"name":"n","uid":"u","generation":1}}`, Options{},
			[]string{"server metadata.generation", "server metadata.uid"}},
		{"status on the main resource", `{"status":{"r":1}}`, `{}`, Options{StatusIgnored: true}, []string{"ignored status"}},
		{"everything but status through /status", `{"metadata":{"labels":{"a":"b"}},"spec":{"r":2},"status":{"r":1}}`,
			`{"metadata":{},"spec":{"r":1},"status":{"r":1}}`, Options{StatusOnly: true},
			[]string{"ignored metadata.labels", "ignored spec.r"}},
		{"a changed scalar", `{"spec":{"s":"a"}}`, `{"spec":{"s":"b"}}`, Options{}, []string{"changed spec.s"}},
		{"lists of other lengths", `{"l":[1,2]}`, `{"l":[1]}`, Options{}, []string{"changed l"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range Diff(decode(tc.input), decode(tc.stored), tc.opts) {
				got = append(got, string(m.Kind)+" "+m.Path)
			}
			if strings.Join(got, ", ") != strings.Join(tc.want, ", ") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

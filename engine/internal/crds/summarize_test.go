package crds

import (
	"strings"
	"testing"
)

func TestSummarizeBody(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "<empty>"},
		{`{"a":1}`, `{"a":1}`},
		{`{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":1}`, `{"` + strings.Repeat("a", 28) + " ..."},
		{"ab", "6162"},
	} {
		if got := SummarizeBody([]byte(tc.in), 30); got != tc.want {
			t.Errorf("SummarizeBody(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

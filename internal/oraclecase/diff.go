package oraclecase

// A small line diff in unified format. The oracle shells out to diff -u;
// this package cannot, because it also runs under GOOS=js (no exec).

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

const (
	diffContext = 3
	// maxEditDistance bounds the Myers search. Beyond it the differing
	// middle is shown as one block of removals and additions: such a diff
	// is unreadable anyway and gets truncated, and the bound keeps time and
	// memory (quadratic in the distance) small.
	maxEditDistance = 2000
)

type diffKind byte

const (
	diffEqual  diffKind = ' '
	diffDelete diffKind = '-'
	diffInsert diffKind = '+'
)

type diffLine struct {
	kind diffKind
	text string
}

// splitLines splits text into lines without their newline; noEOL reports
// that the last line was not terminated, which diff -u marks explicitly.
func splitLines(text []byte) (lines []string, noEOL bool) {
	s := string(text)
	if s == "" {
		return nil, false
	}
	noEOL = !strings.HasSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n"), noEOL
}

// UnifiedDiff returns a unified diff (3 lines of context, as diff -u) that
// turns want into got, with fromName and toName in the header, or "" if
// they are equal.
func UnifiedDiff(fromName, toName string, want, got []byte) string {
	a, aNoEOL := splitLines(want)
	b, bNoEOL := splitLines(got)
	if aNoEOL != bNoEOL && len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		// Only the final newline differs: make the last lines unequal so
		// that the change (and its marker) shows up in a hunk.
		a[len(a)-1] += "\x00"
	}
	script := diffLines(a, b)
	changed := false
	for _, l := range script {
		if l.kind != diffEqual {
			changed = true
			break
		}
	}
	if !changed {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", fromName, toName)
	writeHunks(&sb, script, len(a), len(b), aNoEOL, bNoEOL)
	return sb.String()
}

// diffLines returns an edit script from a to b: common prefix and suffix
// are taken as is, the middle goes through Myers' O(ND) algorithm.
func diffLines(a, b []string) []diffLine {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []diffLine
	for _, s := range a[:pre] {
		out = append(out, diffLine{diffEqual, s})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, s := range a[len(a)-suf:] {
		out = append(out, diffLine{diffEqual, s})
	}
	return out
}

func myers(a, b []string) []diffLine {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return blockReplace(a, b)
	}
	maxD := min(n+m, maxEditDistance)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	// trace[d] is a copy of v[-d-1 .. d+1] before round d, which is all the
	// backtracking step for round d reads.
	var trace [][]int
	found := false
	for d := 0; d <= maxD && !found; d++ {
		snap := make([]int, 2*d+3)
		copy(snap, v[off-d-1:off+d+2])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
	}
	if !found {
		return blockReplace(a, b)
	}
	// Walk back from (n, m), collecting the script in reverse.
	var rev []diffLine
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		snap := trace[d]
		at := func(k int) int { return snap[k+d+1] }
		k := x - y
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, diffLine{diffEqual, a[x-1]})
			x--
			y--
		}
		if x == prevX {
			rev = append(rev, diffLine{diffInsert, b[y-1]})
		} else {
			rev = append(rev, diffLine{diffDelete, a[x-1]})
		}
		x, y = prevX, prevY
	}
	for x > 0 && y > 0 {
		rev = append(rev, diffLine{diffEqual, a[x-1]})
		x--
		y--
	}
	out := make([]diffLine, len(rev))
	for i, l := range rev {
		out[len(rev)-1-i] = l
	}
	return out
}

func blockReplace(a, b []string) []diffLine {
	out := make([]diffLine, 0, len(a)+len(b))
	for _, s := range a {
		out = append(out, diffLine{diffDelete, s})
	}
	for _, s := range b {
		out = append(out, diffLine{diffInsert, s})
	}
	return out
}

// writeHunks prints the script as unified hunks with diffContext lines of
// context around each change; changes closer than twice that share a hunk.
func writeHunks(sb *strings.Builder, script []diffLine, na, nb int, aNoEOL, bNoEOL bool) {
	// line numbers (0-based) in a and b before each script entry
	ai := make([]int, len(script)+1)
	bi := make([]int, len(script)+1)
	for i, l := range script {
		ai[i+1], bi[i+1] = ai[i], bi[i]
		if l.kind != diffInsert {
			ai[i+1]++
		}
		if l.kind != diffDelete {
			bi[i+1]++
		}
	}
	i := 0
	for i < len(script) {
		for i < len(script) && script[i].kind == diffEqual {
			i++
		}
		if i == len(script) {
			break
		}
		start := max(i-diffContext, 0)
		// extend the hunk while the next change is within reach
		end := i
		for j := i; j < len(script); j++ {
			if script[j].kind != diffEqual {
				end = j + 1
			} else if j-end >= 2*diffContext {
				break
			}
		}
		end = min(end+diffContext, len(script))
		fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(ai[start], ai[end]-ai[start]), hunkRange(bi[start], bi[end]-bi[start]))
		for j := start; j < end; j++ {
			l := script[j]
			sb.WriteByte(byte(l.kind))
			sb.WriteString(strings.TrimSuffix(l.text, "\x00"))
			sb.WriteByte('\n')
			// the unterminated last line of a side is flagged like diff -u
			if (l.kind != diffInsert && aNoEOL && ai[j+1] == na) || (l.kind != diffDelete && bNoEOL && bi[j+1] == nb) {
				sb.WriteString("\\ No newline at end of file\n")
			}
		}
		i = end
	}
}

// hunkRange formats a hunk's line range the way diff -u does: 1-based
// start, count omitted when 1, and an empty range numbered by the line
// before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	default:
		return fmt.Sprintf("%d,%d", start+1, count)
	}
}

// truncate caps s at n bytes (on a rune boundary) like the oracle's diff
// output, so a badly wrong response cannot flood a test log.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n..."
}

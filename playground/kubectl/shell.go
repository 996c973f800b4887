package kubectl

import (
	"fmt"
	"strings"
)

// SplitCommandLine splits a command line into words the way a POSIX shell does for the simple commands a
// user types at a kubectl prompt: words separated by blanks, single quotes taking everything literally,
// double quotes with backslash escapes of \ " $ ` and newline, backslash escapes outside quotes, line
// continuations and # comments at the start of a word.
//
// The playground runs no shell, so the constructs that would need one (pipes, redirections, command lists,
// substitutions and variables) are errors that name the construct, rather than words passed on to
// kubectl where they would produce confusing messages.
func SplitCommandLine(line string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool // cur holds a word, possibly empty ('' or "")
		r       = []rune(line)
		n       = len(r)
		endWord = func() {
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		}
	)
	for i := 0; i < n; i++ {
		c := r[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			endWord()
		case c == '#' && !inWord:
			// A comment runs to the end of the line.
			for i < n && r[i] != '\n' {
				i++
			}
		case c == '\\':
			if i+1 >= n {
				// A trailing backslash continues onto a line that is not there: keep it, as bash does.
				cur.WriteRune(c)
				inWord = true
				continue
			}
			i++
			if r[i] == '\n' {
				continue // line continuation
			}
			cur.WriteRune(r[i])
			inWord = true
		case c == '\'':
			end := indexRune(r, i+1, '\'')
			if end < 0 {
				return nil, fmt.Errorf("unexpected end of command line: unterminated single quote (') at column %d", i+1)
			}
			cur.WriteString(string(r[i+1 : end]))
			inWord = true
			i = end
		case c == '"':
			j := i + 1
			for ; j < n && r[j] != '"'; j++ {
				switch r[j] {
				case '\\':
					if j+1 < n && strings.ContainsRune("\\\"$`\n", r[j+1]) {
						j++
						if r[j] != '\n' {
							cur.WriteRune(r[j])
						}
						continue
					}
					cur.WriteRune(r[j])
				case '$', '`':
					if j+1 < n && (r[j] == '`' || r[j+1] == '(' || r[j+1] == '{' || isNameStart(r[j+1])) {
						return nil, unsupported(r, j)
					}
					cur.WriteRune(r[j])
				default:
					cur.WriteRune(r[j])
				}
			}
			if j >= n {
				return nil, fmt.Errorf("unexpected end of command line: unterminated double quote (\") at column %d", i+1)
			}
			inWord = true
			i = j
		case c == '|' || c == '&' || c == ';' || c == '<' || c == '>' || c == '`' || c == '(' || c == ')':
			return nil, unsupported(r, i)
		case c == '$' && i+1 < n && (r[i+1] == '(' || r[i+1] == '{' || isNameStart(r[i+1])):
			return nil, unsupported(r, i)
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	endWord()
	return words, nil
}

func indexRune(r []rune, from int, c rune) int {
	for i := from; i < len(r); i++ {
		if r[i] == c {
			return i
		}
	}
	return -1
}

func isNameStart(c rune) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strings.ContainsRune("?!#@*-", c)
}

// unsupported names the shell construct at r[i].
func unsupported(r []rune, i int) error {
	what := string(r[i])
	switch r[i] {
	case '|':
		what = "pipes (|)"
		if i+1 < len(r) && r[i+1] == '|' {
			what = "command lists (||)"
		}
	case '&':
		what = "background jobs (&)"
		if i+1 < len(r) && r[i+1] == '&' {
			what = "command lists (&&)"
		}
	case ';':
		what = "command lists (;)"
	case '<', '>':
		what = "redirections (" + string(r[i]) + ")"
	case '`':
		what = "command substitution (`...`)"
	case '(', ')':
		what = "subshells (" + string(r[i]) + ")"
	case '$':
		what = "variables and substitutions ($)"
		if i+1 < len(r) && r[i+1] == '(' {
			what = "command substitution ($(...))"
		}
	}
	return fmt.Errorf("the playground runs one kubectl command without a shell: %s at column %d are not supported (quote the character if it belongs to an argument)", what, i+1)
}

// Package fieldmanager names the field manager of a write as kube-apiserver's handlers do, for every API the
// engine serves (its own resources and those of the admission chain it is given), which cannot share the
// handlers' unexported function.
package fieldmanager

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name is the field manager of a write: the fieldManager option, or the client's user agent up to its first
// '/', made printable and capped at 128 bytes.
func Name(manager, userAgent string) string {
	if manager != "" {
		return manager
	}
	m := strings.Split(userAgent, "/")[0]
	buf := []rune{}
	for _, r := range m {
		if unicode.IsPrint(r) {
			buf = append(buf, r)
		} else {
			buf = append(buf, utf8.RuneError)
		}
	}
	s := string(buf)
	for len(s) > 128 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

package shellquote

import "strings"

// safe reports whether c may appear unquoted: the ASCII set
// [A-Za-z0-9_@%+=:,./-] of Python's shlex.quote.
func safe(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '_', '@', '%', '+', '=', ':', ',', '.', '/', '-':
		return true
	}
	return false
}

// Quote returns s as one shell word that a POSIX shell reads back as exactly
// s, whatever s holds: quotes, $(...), backticks, backslashes, '!', newlines,
// bytes that are not UTF-8 (NUL cannot occur in an argument or environment
// variable and is not special-cased).
//
// As Python's shlex.quote: the empty string becomes two single quotes; a
// string made only of [A-Za-z0-9_@%+=:,./-] is returned unchanged; anything
// else is wrapped in single quotes, inside which the shell interprets
// nothing, and each ' is written as '"'"' (close the quote, a double-quoted
// ', reopen). Single quotes also keep bash's history expansion ('!') and
// brace expansion off.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for i := 0; i < len(s); i++ {
		if !safe(s[i]) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2 + 4*strings.Count(s, "'"))
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b.WriteString(`'"'"'`)
			continue
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

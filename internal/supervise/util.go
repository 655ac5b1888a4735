package supervise

import (
	"errors"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// errnoText is the errno's text as the C library writes it ("Permission
// denied") when err carries one, else err's text.
func errnoText(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	s := errno.Error()
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// Package mdblock extracts the fenced code blocks of the repository's
// Markdown files that a marker line names, so that tests run the commands
// the documentation tells people to paste, as written
// (docs/testing.md#documented-commands).
//
// A block is marked by an HTML comment (invisible on GitHub) on the line
// right before its opening fence:
//
//	<!-- test: install-clone -->
//	```sh
//	go build -o lens ./cmd/lens
//	```
//
// It is test support: nothing shipped imports it (layout_test.go). The
// package reads no environment variables and emits no attributes.
package mdblock

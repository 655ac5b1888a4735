package main

import (
	"fmt"
	"io"

	"github.com/nemolens/lens-go/internal/telemetry"
)

// printVersion writes what lens --version prints (docs/install.md#version):
// "lens VERSION" on the first line, then the commit, whether the tree was
// modified, the Go version and the platform, one "key: value" per line.
// An unknown commit or modified flag is printed as "unknown".
func printVersion(w io.Writer, b telemetry.Build) {
	unknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	fmt.Fprintf(w, "lens %s\ncommit: %s\nmodified: %s\ngo: %s\nplatform: %s\n",
		b.Version, unknown(b.Commit), unknown(b.Modified), b.GoVersion, b.Platform)
}

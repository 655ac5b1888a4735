//go:build !unix

package main

import "io"

// dialSyslog: no syslog outside Unix.
func dialSyslog() io.WriteCloser { return nil }

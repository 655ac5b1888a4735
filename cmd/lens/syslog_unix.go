//go:build unix

package main

import (
	"io"
	"log/syslog"
)

// dialSyslog connects to the local syslog daemon (tag lens-taskprolog,
// facility user, priority warning), or returns nil when there is none.
func dialSyslog() io.WriteCloser {
	w, err := syslog.New(syslog.LOG_WARNING|syslog.LOG_USER, TaskPrologName)
	if err != nil {
		return nil
	}
	return w
}

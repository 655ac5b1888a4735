//go:build unix

package main

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// syslogPriority is facility user, severity warning (RFC 3164: 1*8 + 4).
const syslogPriority = 1*8 + 4

// dialSyslog connects to the syslog socket path (a datagram socket, else a
// stream socket, as log/syslog does) and returns a writer that sends one
// message per Write, tagged tag[pid], or nil when there is none. Nothing
// it does blocks past deadline: the socket is non-blocking and every write
// has the deadline, so a daemon that reads nothing (a full queue) makes
// the write fail at the deadline instead of waiting forever
// (docs/taskprolog.md#bounds). log/syslog cannot: its writes have no
// deadline.
func dialSyslog(path, tag string, pid int, deadline time.Time) io.WriteCloser {
	d := net.Dialer{Deadline: deadline}
	for _, network := range []string{"unixgram", "unix"} {
		c, err := d.Dial(network, path)
		if err != nil {
			continue
		}
		if err := c.SetWriteDeadline(deadline); err != nil {
			c.Close()
			return nil
		}
		return &syslogWriter{c: c, tag: tag, pid: pid, stream: network == "unix"}
	}
	return nil
}

type syslogWriter struct {
	c      net.Conn
	tag    string
	pid    int
	stream bool
}

// Write sends p as one message in the local format of log/syslog:
// "<PRI>Mmm dd hh:mm:ss TAG[PID]: MSG" (a stream socket gets a newline
// after each message).
func (w *syslogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSuffix(string(p), "\n")
	line := fmt.Sprintf("<%d>%s %s[%d]: %s", syslogPriority, time.Now().Format(time.Stamp), w.tag, w.pid, msg)
	if w.stream {
		line += "\n"
	}
	if _, err := io.WriteString(w.c, line); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *syslogWriter) Close() error { return w.c.Close() }

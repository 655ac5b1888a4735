package taskprolog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DefaultPolicyPath is the policy file lens taskprolog reads when neither
// --policy nor LENS_TASKPROLOG_POLICY names one (docs/taskprolog.md#policy).
const DefaultPolicyPath = "/etc/nemo-lens/taskprolog.conf"

// MaxPolicySize bounds the policy file; a larger one is an error.
const MaxPolicySize = 64 << 10

// Values of the policy's switches.
const (
	RanksNone  = "none"
	RanksSlurm = "slurm"
	On         = "on"
	Off        = "off"
)

// Policy is what a cluster's admin asks every task to carry besides the
// carrier and the run id (docs/taskprolog.md#policy). The zero value is the
// built-in policy: carrier on, no ranks, no service name, no settings.
type Policy struct {
	// NoCarrier turns the carrier off (carrier = off).
	NoCarrier bool
	// Ranks is "" or RanksNone (no ranks) or RanksSlurm (nv.dl.rank,
	// nv.dl.world_size and nv.dl.local_rank from Slurm in every step task).
	Ranks string
	// ServiceName is the default OTEL_SERVICE_NAME ("" sets none).
	ServiceName string
	// Env are the default settings (env.NAME = VALUE), in file order.
	Env []Setting
	// Log is the file lens appends its reports to ("" for none); "%u" in
	// it stands for the task's numeric user id (LogPath, AppendLog).
	Log string
	// Syslog is the syslog socket reports go to: "" for the default
	// (DefaultSyslogPath), SyslogOff for none, else an absolute path.
	Syslog string
	// Warnings are *PolicyError for lines that are applied but probably
	// not meant as written (a quoted value, a value holding " #"): the
	// policy is applied and the warnings reported.
	Warnings []error
}

// DefaultSyslogPath is the syslog socket of a policy without syslog.
const DefaultSyslogPath = "/dev/log"

// SyslogOff is the policy's syslog value that sends no report to syslog.
const SyslogOff = "off"

// Setting is one env.NAME = VALUE line.
type Setting struct {
	Name, Value string
}

// Errors of a policy line (errors.Is on a *PolicyError).
var (
	ErrSyntax     = errors.New("want KEY = VALUE")
	ErrUnknownKey = errors.New("unknown key")
	ErrBadValue   = errors.New("invalid value")
	ErrDuplicate  = errors.New("key given twice")
	ErrTooLarge   = fmt.Errorf("larger than %d bytes", MaxPolicySize)
	// Warnings (Policy.Warnings): the line is applied as written.
	ErrQuoted  = errors.New("the value is quoted; quotes are kept as part of it (the policy has no quoting)")
	ErrComment = errors.New(`the value holds " #"; it is kept as part of the value (the policy has no inline comments)`)
)

// PolicyError is a problem of the policy file: File, and Line when one line
// is at fault (0 for the whole file: unreadable, too large).
type PolicyError struct {
	File string
	Line int
	Err  error
}

func (e *PolicyError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("policy %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("policy %s:%d: %v", e.File, e.Line, e.Err)
}

func (e *PolicyError) Unwrap() error { return e.Err }

// Managed are the variables lens taskprolog sets itself; env.NAME may not
// name them (service_name is the policy's word for OTEL_SERVICE_NAME).
var Managed = []string{"OTEL_RESOURCE_ATTRIBUTES", "NEMO_LENS_RUN_ID", "OTEL_SERVICE_NAME"}

// settingPrefixes are the prefixes env.NAME may have: the policy sets
// telemetry settings, nothing else.
var settingPrefixes = []string{"OTEL_", "NEMO_LENS_"}

// LoadPolicy reads the policy file path. A file that does not exist gives
// an error wrapping fs.ErrNotExist (the caller decides whether that is a
// problem). On any error the returned Policy is still the one to report
// with: its Log is set when the file's log line was valid, and nothing else
// of a faulty file is applied (docs/taskprolog.md#policy).
//
// The file is opened with OpenRegular: a FIFO, a device or a directory is
// refused at once (ErrNotRegular), never waited for.
func LoadPolicy(path string) (Policy, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return Policy{}, &PolicyError{File: path, Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPolicySize+1))
	if err != nil {
		return Policy{}, &PolicyError{File: path, Err: err}
	}
	return ParsePolicy(path, data)
}

// ParsePolicy parses policy text (docs/taskprolog.md#policy): one KEY =
// VALUE per line, split at the first '='; spaces and tabs around KEY and
// VALUE are removed, and one "\r" at the end of a line; empty lines and
// lines starting with '#' are ignored. Keys: carrier (on|off), ranks
// (none|slurm), service_name, log, syslog, and env.NAME for NAME an OTEL_*
// or NEMO_LENS_* variable other than those in Managed. Each key at most
// once. Text longer than MaxPolicySize is ErrTooLarge.
//
// The error joins one *PolicyError per faulty line. With an error the
// Policy holds only Log and Syslog (when their lines were valid): a faulty
// file is not applied in part, but its faults can be reported.
func ParsePolicy(name string, data []byte) (Policy, error) {
	if len(data) > MaxPolicySize {
		return Policy{}, errors.Join(&PolicyError{File: name, Err: ErrTooLarge})
	}
	var p Policy
	var errs []error
	seen := map[string]bool{}
	fail := func(line int, err error) { errs = append(errs, &PolicyError{File: name, Line: line, Err: err}) }
	n := 0
	for len(data) > 0 {
		n++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		text := trim(string(line))
		if text == "" || text[0] == '#' {
			continue
		}
		rawKey, rawValue, ok := strings.Cut(text, "=")
		if !ok {
			fail(n, ErrSyntax)
			continue
		}
		key, value := trim(rawKey), trim(rawValue)
		if strings.IndexByte(value, 0) >= 0 {
			fail(n, fmt.Errorf("%w for %s: %w", ErrBadValue, key, ErrNUL))
			continue
		}
		if seen[key] {
			fail(n, fmt.Errorf("%w: %s", ErrDuplicate, key))
			continue
		}
		seen[key] = true
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			p.Warnings = append(p.Warnings, &PolicyError{File: name, Line: n, Err: fmt.Errorf("%s: %w", key, ErrQuoted)})
		}
		if strings.Contains(value, " #") || strings.Contains(value, "\t#") {
			p.Warnings = append(p.Warnings, &PolicyError{File: name, Line: n, Err: fmt.Errorf("%s: %w", key, ErrComment)})
		}
		switch {
		case key == "carrier":
			switch value {
			case On:
				p.NoCarrier = false
			case Off:
				p.NoCarrier = true
			default:
				fail(n, fmt.Errorf("%w for carrier: %q (want on or off)", ErrBadValue, value))
			}
		case key == "ranks":
			switch value {
			case RanksNone, RanksSlurm:
				p.Ranks = value
			default:
				fail(n, fmt.Errorf("%w for ranks: %q (want none or slurm)", ErrBadValue, value))
			}
		case key == "service_name":
			p.ServiceName = value
		case key == "log":
			if !strings.HasPrefix(value, "/") {
				fail(n, fmt.Errorf("%w for log: %q (want an absolute path)", ErrBadValue, value))
				continue
			}
			p.Log = value
		case key == "syslog":
			if value != SyslogOff && !strings.HasPrefix(value, "/") {
				fail(n, fmt.Errorf("%w for syslog: %q (want off or the absolute path of a socket)", ErrBadValue, value))
				continue
			}
			p.Syslog = value
		case strings.HasPrefix(key, "env."):
			v := key[len("env."):]
			switch {
			case !ValidName(v):
				fail(n, fmt.Errorf("%w: %q is %w", ErrBadValue, v, ErrName))
			case !hasAnyPrefix(v, settingPrefixes):
				fail(n, fmt.Errorf("%w: %s is not an OTEL_* or NEMO_LENS_* variable", ErrBadValue, v))
			case isManaged(v):
				fail(n, fmt.Errorf("%w: lens taskprolog sets %s itself", ErrBadValue, v))
			default:
				p.Env = append(p.Env, Setting{Name: v, Value: value})
			}
		default:
			fail(n, fmt.Errorf("%w %q", ErrUnknownKey, key))
		}
	}
	if len(errs) > 0 {
		return Policy{Log: p.Log, Syslog: p.Syslog}, errors.Join(errs...)
	}
	return p, nil
}

func trim(s string) string { return strings.Trim(s, " \t") }

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func isManaged(name string) bool {
	for _, m := range Managed {
		if name == m {
			return true
		}
	}
	return false
}

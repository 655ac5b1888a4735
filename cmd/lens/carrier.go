package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/cli"
)

// readCarrier reads carrier text from stdin; one trailing "\n" is not part
// of it.
func (a *app) readCarrier() (string, error) {
	b, err := io.ReadAll(a.stdin)
	if err != nil {
		return "", fmt.Errorf("reading stdin: %w", err)
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// carrierOnly reads the carrier from stdin for a command that takes no
// arguments.
func (a *app) carrierOnly(args []string) (string, error) {
	if err := noArgs(args); err != nil {
		return "", err
	}
	return a.readCarrier()
}

// writeObject writes m as one JSON object and a newline, and reports on
// stderr every key whose key or value had to be written with U+FFFD.
func (a *app) writeObject(name string, m *attr.Map) error {
	out, invalid := cli.AppendObject(nil, m)
	if _, err := a.stdout.Write(append(out, '\n')); err != nil {
		return err
	}
	for _, k := range invalid {
		fmt.Fprintf(a.stderr, "lens %s: %q: not valid UTF-8; each invalid byte is written as \\ufffd\n", name, k)
	}
	return nil
}

var carrierParseCommand = &command{
	name:    "carrier parse",
	summary: "carrier text (stdin) → JSON object of strings",
	usage:   "< CARRIER",
	help: `Parse the carrier text on stdin as the reference's
parse_otel_resource_attributes does and print one JSON object of string
values, keys in carrier order (docs/compatibility.md#carrier-parse).`,
	setup: func(*flag.FlagSet) runFunc {
		return func(_ context.Context, a *app, args []string) error {
			text, err := a.carrierOnly(args)
			if err != nil {
				return err
			}
			return a.writeObject("carrier parse", carrier.Parse(text))
		}
	},
}

var carrierFormatCommand = &command{
	name:    "carrier format",
	summary: "JSON object (stdin) → carrier text",
	usage:   "< JSON",
	help: `Read one JSON object on stdin and print its carrier text, as the
reference's format_otel_resource_attributes does; dropped entries are
listed on stderr (docs/compatibility.md#carrier-format).`,
	setup: func(*flag.FlagSet) runFunc {
		return func(_ context.Context, a *app, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			data, err := io.ReadAll(a.stdin)
			if err != nil {
				return fmt.Errorf("reading stdin: %w", err)
			}
			m, unsupported, err := cli.DecodeObject(data)
			if err != nil {
				return usagef("stdin: %v", err)
			}
			return a.writeCarrier("carrier format", m, unsupported)
		}
	},
}

// writeCarrier formats m, prints the text and a newline, and reports the
// dropped entries on stderr in map order. unsupported names the keys whose
// value was a JSON array or object (a null placeholder in m).
func (a *app) writeCarrier(name string, m *attr.Map, unsupported map[string]string) error {
	text, dropped := carrier.Format(m)
	if _, err := fmt.Fprintln(a.stdout, text); err != nil {
		return err
	}
	reasons := make(map[string]error, len(dropped))
	for _, d := range dropped {
		reasons[d.Key] = d.Err
	}
	for _, k := range m.Keys() {
		var reason string
		if kind, ok := unsupported[k]; ok {
			reason = "the value is a JSON " + kind + "; only strings, numbers, booleans and null can be carried"
		} else if err, ok := reasons[k]; ok {
			reason = droppedReason(err)
		} else {
			continue
		}
		fmt.Fprintf(a.stderr, "lens %s: dropped %q: %s\n", name, k, reason)
	}
	return nil
}

// reportDropped lists entries carrier.Format dropped, one line each.
func (a *app) reportDropped(name string, dropped []carrier.Dropped) {
	for _, d := range dropped {
		fmt.Fprintf(a.stderr, "lens %s: dropped %q: %s\n", name, d.Key, droppedReason(d.Err))
	}
}

func droppedReason(err error) string {
	switch {
	case errors.Is(err, carrier.ErrKeyHasNUL):
		return "the key cannot be carried (it holds NUL, which no environment variable can hold)"
	case errors.Is(err, carrier.ErrKeyNotCarried):
		return "the key cannot be carried (it is empty after trimming or holds ',' or '=')"
	case errors.Is(err, carrier.ErrInvalidUTF8):
		return "the value is not valid UTF-8"
	}
	return err.Error()
}

var carrierExtendCommand = &command{
	name:    "carrier extend",
	summary: "compose carrier text (stdin) with defaults and overrides",
	usage:   "< CARRIER",
	help: `Print format(compose(parse(CARRIER), DEFAULTS, OVERRIDES)), as the
reference's extend_otel_resource_attributes does: defaults < current
carrier < overrides (docs/compatibility.md#extend).`,
	setup: func(fs *flag.FlagSet) runFunc {
		defaults := fs.String("defaults", "{}", "`JSON` object of values the carrier keeps when it has them")
		overrides := fs.String("overrides", "{}", "`JSON` object of values that replace the carrier's")
		return func(_ context.Context, a *app, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			def, defUnsupported, err := cli.DecodeObject([]byte(*defaults))
			if err != nil {
				return usagef("--defaults: %v", err)
			}
			ovr, ovrUnsupported, err := cli.DecodeObject([]byte(*overrides))
			if err != nil {
				return usagef("--overrides: %v", err)
			}
			text, err := a.readCarrier()
			if err != nil {
				return err
			}
			// carrier.Extend is Format(Compose(Parse(text), ...)); composing
			// here tells which layer's array or object won.
			current := carrier.Parse(text)
			composed := carrier.Compose(current, def, ovr)
			var unsupported map[string]string
			for _, k := range composed.Keys() {
				kind, ok := "", false
				switch {
				case ovr.Has(k):
					kind, ok = ovrUnsupported[k]
				case current.Has(k):
				default:
					kind, ok = defUnsupported[k]
				}
				if ok {
					if unsupported == nil {
						unsupported = map[string]string{}
					}
					unsupported[k] = kind
				}
			}
			return a.writeCarrier("carrier extend", composed, unsupported)
		}
	},
}

var carrierCheckCommand = &command{
	name:    "carrier check",
	summary: "check carrier text (stdin) for problems",
	usage:   "< CARRIER",
	help: `Check the carrier text on stdin and print one line per problem: malformed
segments, duplicate keys, required keys missing or empty, forbidden keys
present (docs/compatibility.md#carrier-checks).`,
	setup: func(fs *flag.FlagSet) runFunc {
		var required, forbidden keyList
		fs.Var(&required, "require", "comma-separated `KEYS` that must be present and non-empty (repeatable)")
		fs.Var(&forbidden, "forbid", "comma-separated `KEYS` that must be absent (repeatable)")
		return func(_ context.Context, a *app, args []string) error {
			text, err := a.carrierOnly(args)
			if err != nil {
				return err
			}
			var problems []string
			for _, s := range carrier.Malformed(text) {
				problems = append(problems, fmt.Sprintf("malformed segment %q", s))
			}
			r := carrier.Check(carrier.Parse(text), required, forbidden, text)
			for _, k := range r.Duplicates {
				problems = append(problems, fmt.Sprintf("duplicate key %q", k))
			}
			for _, k := range r.Missing {
				problems = append(problems, fmt.Sprintf("missing key %q", k))
			}
			for _, k := range r.Empty {
				problems = append(problems, fmt.Sprintf("empty key %q", k))
			}
			for _, k := range r.Forbidden {
				problems = append(problems, fmt.Sprintf("forbidden key %q", k))
			}
			if len(problems) == 0 {
				return nil
			}
			if _, err := fmt.Fprintln(a.stdout, strings.Join(problems, "\n")); err != nil {
				return err
			}
			return exitStatus(1)
		}
	},
}

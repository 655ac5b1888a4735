package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/internal/cli"
)

var detectCommand = &command{
	name:    "detect",
	summary: "print the attributes detected for this process",
	usage:   "",
	help: `Print the resource attributes the detectors find for this process: local
(host.name, process.pid, host.gpu.count), Slurm and Kubernetes, merged in
that order, or one detector with --only; --only gpus prints lens-go's GPU
identity instead. --explain says where each came from and why candidates
were discarded (docs/detection.md).`,
	setup: func(fs *flag.FlagSet) runFunc {
		only := choiceFlag(fs, "only", "", "run only this detector", "local", "slurm", "kubernetes", "gpus")
		format := choiceFlag(fs, "format", "text", "the output format", "text", "json", "env")
		explain := fs.Bool("explain", false, "say where every attribute came from")
		return func(ctx context.Context, a *app, args []string) error {
			e, err := explanation(args, *explain, format.value)
			if err != nil {
				return err
			}
			opts := append(a.detectOptions(), detect.WithExplanation(e))
			var m *attr.Map
			switch only.value {
			case "local":
				m = detect.Local(ctx, opts...)
			case "slurm":
				m = detect.Slurm(ctx, opts...)
			case "kubernetes":
				m = detect.Kubernetes(ctx, opts...)
			case "gpus":
				devs, err := a.probeGPUs(ctx, detectGPUBound)
				if err != nil && !errors.Is(err, detect.ErrNoGPUDriver) {
					return fmt.Errorf("GPU identity: %s", oneLine(err))
				}
				// A bare header says nothing of why: say it beside.
				switch {
				case err != nil:
					fmt.Fprintf(a.stderr, "lens detect: no GPU identity: %s\n", oneLine(err))
				case len(devs) == 0:
					fmt.Fprintln(a.stderr, "lens detect: no GPU identity: no GPU is visible to this process")
				}
				m = detect.VisibleGPUAttributes(devs)
				if e != nil && len(devs) > 0 {
					for k := range m.All() {
						e.Record(k, devs[0].Source)
					}
				}
			default:
				m = detect.All(ctx, opts...)
			}
			return a.writeAttrs("detect", format.value, m, e)
		}
	},
}

// detectOptions are the detection options of every command: lens's
// environment, host-name probe and logger.
func (a *app) detectOptions() []detect.Option {
	opts := []detect.Option{detect.WithEnv(a.env), detect.WithLogger(a.logger)}
	if a.hostname != nil {
		opts = append(opts, detect.WithHostname(a.hostname))
	}
	return opts
}

// writeAttrs prints m in format (text, json or env) with the explanation
// when e is not nil.
func (a *app) writeAttrs(name, format string, m *attr.Map, e *detect.Explanation) error {
	switch format {
	case "json":
		if e == nil {
			return a.writeObject(name, m)
		}
		out, invalid := cli.AppendObject([]byte(`{"attributes":`), m)
		out = append(out, `,"explain":[`...)
		for i, o := range e.Origins() {
			if i > 0 {
				out = append(out, ',')
			}
			out, _ = cli.AppendString(append(out, `{"key":`...), o.Key)
			out = append(out, `,"source":`...)
			if o.Source == "" {
				out = append(out, "null"...)
			} else {
				out, _ = cli.AppendString(out, o.Source)
			}
			out = append(out, `,"notes":[`...)
			for j, n := range o.Notes {
				if j > 0 {
					out = append(out, ',')
				}
				out, _ = cli.AppendString(out, n)
			}
			out = append(out, "]}"...)
		}
		out = append(out, "]}\n"...)
		if _, err := a.stdout.Write(out); err != nil {
			return err
		}
		for _, k := range invalid {
			fmt.Fprintf(a.stderr, "lens %s: %q: not valid UTF-8; each invalid byte is written as \\ufffd\n", name, k)
		}
		return nil
	case "env":
		text, dropped := carrier.Format(m)
		if _, err := fmt.Fprintln(a.stdout, text); err != nil {
			return err
		}
		a.reportDropped(name, dropped)
		return nil
	}
	return a.writeTable(m, e)
}

// writeTable prints the attributes as an aligned table for people.
func (a *app) writeTable(m *attr.Map, e *detect.Explanation) error {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	header := "KEY\tVALUE\tTYPE"
	if e != nil {
		header += "\tSOURCE"
	}
	fmt.Fprintln(tw, header)
	for k, v := range m.All() {
		row := display(k) + "\t" + displayValue(v) + "\t" + typeName(v)
		if e != nil {
			src := "-"
			if o, _ := e.Origin(k); o.Source != "" {
				src = display(o.Source)
			}
			row += "\t" + src
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if e == nil {
		return nil
	}
	var notes []string
	for _, o := range e.Origins() {
		label := display(o.Key)
		if !m.Has(o.Key) {
			label += " (not emitted)"
		}
		for _, n := range o.Notes {
			notes = append(notes, "  "+label+": "+display(n))
		}
	}
	if len(notes) > 0 {
		_, err := fmt.Fprintf(a.stdout, "\nnotes:\n%s\n", strings.Join(notes, "\n"))
		return err
	}
	return nil
}

// display returns s for a table cell: as it is when it is non-empty, valid
// UTF-8, printable and not edged with spaces; Go-quoted otherwise, so that
// every byte stays visible and tabs or newlines cannot break the table.
func display(s string) string {
	if s == "" || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(s)
		}
	}
	if strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return s
}

func displayValue(v attr.Value) string {
	if v.Kind() == attr.KindString {
		return display(v.AsString())
	}
	return v.String()
}

func typeName(v attr.Value) string {
	switch v.Kind() {
	case attr.KindString:
		return "string"
	case attr.KindInt64:
		return "int"
	case attr.KindFloat64:
		return "float"
	case attr.KindBool:
		return "bool"
	}
	return "null"
}

// explanation checks the arguments of detect and resource (none) and
// returns the explanation to fill when --explain is given (nil otherwise).
func explanation(args []string, explain bool, format string) (*detect.Explanation, error) {
	if err := noArgs(args); err != nil {
		return nil, err
	}
	if !explain {
		return nil, nil
	}
	if format == "env" {
		return nil, usagef("--explain cannot be combined with --format env")
	}
	return &detect.Explanation{}, nil
}

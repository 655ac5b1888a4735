package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// allCommands returns every node of the command tree, the root first.
func allCommands() []*command {
	out := []*command{root}
	var walk func(c *command)
	walk = func(c *command) {
		for _, s := range c.subs {
			out = append(out, s)
			walk(s)
		}
	}
	walk(root)
	return out
}

// TestHelpFitsAScreen: lens CMD --help of every command fits 80 columns and
// a screen (at most 24 lines), and so does the usage a usage error prints;
// a leaf's help ends with its section of docs/cli.md, which exists, and
// its synopsis names every flag with the placeholder of the flag list.
func TestHelpFitsAScreen(t *testing.T) {
	t.Parallel()
	manual, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := allCommands()
	if len(cmds) < 15 {
		t.Fatalf("only %d commands walked", len(cmds))
	}
	for _, c := range cmds {
		args := append(strings.Fields(strings.TrimPrefix(c.name, "lens")), "--help")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			r := runIn(t, nil, "", args...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("lens %s: %v", strings.Join(args, " "), r)
			}
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			if len(lines) > 24 {
				t.Errorf("%d lines, more than a screen (24):\n%s", len(lines), r.stdout)
			}
			for _, l := range lines {
				if len(l) > helpWidth { // bytes, as awk 'length > 80' counts in the C locale
					t.Errorf("a line of %d bytes:\n%s", len(l), l)
				}
			}
			if c.subs != nil {
				return
			}
			want := "\nManual: docs/cli.md#" + c.manualAnchor() + "\n"
			if !strings.HasSuffix(r.stdout, want) {
				t.Errorf("the help does not end with %q", want)
			}
			if !strings.Contains(string(manual), `<a id="`+c.manualAnchor()+`"></a>`) {
				t.Errorf("docs/cli.md has no anchor %s", c.manualAnchor())
			}
			synopsis, flags, _ := strings.Cut(r.stdout, "\nflags:\n")
			fs := newFlagSet(c)
			c.setup(fs)
			fs.VisitAll(func(f *flag.Flag) {
				spelled := strings.TrimSpace("--" + f.Name + " " + flagArg(f))
				if !strings.Contains(synopsis, spelled) || !strings.Contains(flags, "  "+spelled+" ") && !strings.Contains(flags, "  "+spelled+"\n") {
					t.Errorf("%q is not spelled the same in the synopsis and the flag list:\n%s", spelled, r.stdout)
				}
			})
			// A usage error prints the synopsis and the flags: also 80 columns.
			bad := runIn(t, nil, "", append(args[:len(args)-1], "--no-such-flag")...)
			for l := range strings.SplitSeq(bad.stderr, "\n") {
				if len(l) > helpWidth { // bytes, as awk 'length > 80' counts in the C locale
					t.Errorf("usage error: a line of %d bytes:\n%s", len(l), l)
				}
			}
		})
	}
}

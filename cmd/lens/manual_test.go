package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestManualCoversCommands: every command of the tree has its section in
// docs/cli.md (its own, or its parent's for a group documented together)
// and its line in the synopsis of doc.go, and every flag of its flag set is
// named in that section, so that the manual cannot fall behind the commands.
func TestManualCoversCommands(t *testing.T) {
	t.Parallel()
	manual, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	anchor := func(name string) bool {
		return strings.Contains(string(manual), `<a id="lens-`+strings.ReplaceAll(name, " ", "-")+`"></a>`)
	}
	var walk func(c *command, parent string)
	leaves, flags := 0, 0
	walk = func(c *command, parent string) {
		if c.setup == nil {
			for _, s := range c.subs {
				walk(s, c.name)
			}
			return
		}
		leaves++
		if !anchor(c.name) && !anchor(parent) {
			t.Errorf("docs/cli.md has no section for lens %s (anchor lens-%s)", c.name, strings.ReplaceAll(c.name, " ", "-"))
		}
		if !strings.Contains(string(doc), "//\tlens "+c.name+" ") {
			t.Errorf("doc.go's synopsis has no line for lens %s", c.name)
		}
		// Every flag of the real flag set is in the command's section.
		section := manualSection(string(manual), c.manualAnchor())
		fs := newFlagSet(c)
		c.setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			flags++
			if !regexp.MustCompile(`(^|[^-\w])--` + regexp.QuoteMeta(f.Name) + `\b`).MatchString(section) {
				t.Errorf("docs/cli.md#%s does not list lens %s's flag --%s", c.manualAnchor(), c.name, f.Name)
			}
		})
	}
	for _, c := range root.subs {
		walk(c, "")
	}
	if leaves < 10 || flags < 20 {
		t.Errorf("only %d commands and %d flags walked", leaves, flags)
	}
}

// manualSection is the text of docs/cli.md from the anchor to the next
// command's anchor.
func manualSection(manual, anchor string) string {
	_, rest, ok := strings.Cut(manual, `<a id="`+anchor+`"></a>`)
	if !ok {
		return ""
	}
	if i := strings.Index(rest, `<a id="lens-`); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

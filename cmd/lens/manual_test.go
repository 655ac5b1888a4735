package main

import (
	"os"
	"strings"
	"testing"
)

// TestManualCoversCommands: every command of the tree has its section in
// docs/cli.md (its own, or its parent's for a group documented together)
// and its line in the synopsis of doc.go, so that the manual cannot fall
// behind the commands.
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
	leaves := 0
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
	}
	for _, c := range root.subs {
		walk(c, "")
	}
	if leaves < 10 {
		t.Errorf("only %d commands walked", leaves)
	}
}

package mdblock

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	md := "# Title\n\n<!-- test: one -->\n```sh\necho a\n\necho b\n```\n\n```sh\nnot marked\n```\n" +
		"<!--test:two-->\n````bash title\n```\ninside\n````\n" +
		"````\n<!-- test: quoted -->\n```sh\nnot a block\n```\n````\n"
	got, err := Parse("x.md", []byte(md))
	if err != nil {
		t.Fatal(err)
	}
	want := []Block{
		{Name: "one", Lang: "sh", File: "x.md", Line: 4, Text: "echo a\n\necho b\n"},
		{Name: "two", Lang: "bash", File: "x.md", Line: 14, Text: "```\ninside\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("Parse: %d blocks %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := Script(got[0]); s != "set -euo pipefail\n# ---- x.md:4 (one)\necho a\n\necho b\n" {
		t.Errorf("Script: %q", s)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for md, want := range map[string]string{
		"<!-- test: a -->\ntext\n":        `x.md:1: marker "a" is not followed by a fenced block`,
		"<!-- test: a -->\n":              `x.md: marker "a" at the end of the file`,
		"<!-- test: a -->\n```sh\necho\n": `x.md:2: block "a" is not closed`,
	} {
		if _, err := Parse("x.md", []byte(md)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want %q", md, err, want)
		}
	}
}

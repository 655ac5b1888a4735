package mdblock

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Block is one marked fenced code block.
type Block struct {
	Name string // the marker's name ("install-clone")
	Lang string // the fence's info string up to its first space ("sh")
	File string // the Markdown file, as given to File or Parse
	Line int    // the line of the opening fence, from 1
	Text string // the lines between the fences, each ending in "\n"
}

// String is the block's place, for test messages: "docs/install.md:42 (install-clone)".
func (b Block) String() string { return fmt.Sprintf("%s:%d (%s)", b.File, b.Line, b.Name) }

var markerRE = regexp.MustCompile(`^<!--\s*test:\s*([A-Za-z0-9_.-]+)\s*-->\s*$`)

// Parse returns the marked blocks of markdown in their order. file is used
// only in messages. A marker not followed by a fence on the next line, or a
// fence left open, is an error.
func Parse(file string, markdown []byte) ([]Block, error) {
	var (
		blocks  []Block
		pending string // the marker of the line before
		cur     *Block
		fence   string
		other   string // the fence of an unmarked block being skipped
		n       int
	)
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		if other != "" {
			if strings.TrimSpace(line) == other {
				other = ""
			}
			continue
		}
		if cur != nil {
			if strings.TrimSpace(line) == fence {
				blocks = append(blocks, *cur)
				cur = nil
				continue
			}
			cur.Text += line + "\n"
			continue
		}
		if pending != "" {
			fence = fenceOf(line)
			if fence == "" {
				return nil, fmt.Errorf("%s:%d: marker %q is not followed by a fenced block", file, n-1, pending)
			}
			info := strings.TrimSpace(strings.TrimLeft(line, " ")[len(fence):])
			lang, _, _ := strings.Cut(info, " ")
			cur = &Block{Name: pending, Lang: lang, File: file, Line: n}
			pending = ""
			continue
		}
		if f := fenceOf(line); f != "" {
			// An unmarked block: markers inside it are its text.
			other = f
			continue
		}
		if m := markerRE.FindStringSubmatch(line); m != nil {
			pending = m[1]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if pending != "" {
		return nil, fmt.Errorf("%s: marker %q at the end of the file", file, pending)
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: block %q is not closed", file, cur.Line, cur.Name)
	}
	return blocks, nil
}

// File reads path and returns its marked blocks.
func File(path string) ([]Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Named returns the blocks of path marked name, in order; none is an
// error, so that a renamed marker fails the test that runs it.
func Named(path, name string) ([]Block, error) {
	all, err := File(path)
	if err != nil {
		return nil, err
	}
	var out []Block
	for _, b := range all {
		if b.Name == name {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no block marked <!-- test: %s -->", path, name)
	}
	return out, nil
}

// Script joins the texts of blocks into one bash script that stops at the
// first failing command (set -euo pipefail), each block preceded by a
// comment naming its place.
func Script(blocks ...Block) string {
	var b strings.Builder
	b.WriteString("set -euo pipefail\n")
	for _, bl := range blocks {
		fmt.Fprintf(&b, "# ---- %s\n%s", bl, bl.Text)
	}
	return b.String()
}

// fenceOf returns the fence a line opens (three or more backticks or
// tildes, indented by at most three spaces), or "".
func fenceOf(line string) string {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || !strings.HasPrefix(trimmed, "```") && !strings.HasPrefix(trimmed, "~~~") {
		return ""
	}
	return strings.Repeat(trimmed[:1], len(trimmed)-len(strings.TrimLeft(trimmed, trimmed[:1])))
}

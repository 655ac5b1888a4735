package lens_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The repository carries its own contract: every relative link of its
// Markdown files and every docs/….md#anchor that Go code cites (godoc, --help
// texts, test comments) must name a file of the repository and, with a
// fragment, one of that file's anchors. Nothing may point outside the
// repository.

var (
	mdLinkRE   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	explicitRE = regexp.MustCompile(`<a id="([^"]+)"`)
	goCiteRE   = regexp.MustCompile(`((?:docs|testdata/conformance)/[A-Za-z0-9_-]+\.md)(#[A-Za-z0-9_-]+)?`)
)

// headingSlug is GitHub's anchor for a Markdown heading: lower case, every
// character that is not a letter, digit, space, '-' or '_' removed, spaces
// turned into '-'.
func headingSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// repoFiles lists the repository's files under root with one of the given
// extensions, leaving out version control, build outputs and caches.
func repoFiles(t *testing.T, exts ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".bin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		for _, ext := range exts {
			if strings.HasSuffix(path, ext) {
				files = append(files, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// anchorsOf returns the anchors of a Markdown file: explicit <a id> anchors
// and the slugs of its headings (outside fenced code), with GitHub's -1, -2
// suffixes for repeated headings.
func anchorsOf(t *testing.T, path string, cache map[string]map[string]bool) map[string]bool {
	t.Helper()
	if a, ok := cache[path]; ok {
		return a
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range explicitRE.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		if h, ok := strings.CutPrefix(line, "#"); ok {
			slug := headingSlug(strings.TrimLeft(h, "#"))
			if n := seen[slug]; n > 0 {
				anchors[slug+"-"+strconv.Itoa(n)] = true
			} else {
				anchors[slug] = true
			}
			seen[slug]++
		}
	}
	cache[path] = anchors
	return anchors
}

func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	cache := map[string]map[string]bool{}
	checked := 0
	check := func(from, target, fragment string) {
		t.Helper()
		checked++
		clean := filepath.Clean(target)
		if clean == ".." || strings.HasPrefix(clean, "../") || filepath.IsAbs(clean) {
			t.Errorf("%s: %q points outside the repository", from, target+fragment)
			return
		}
		info, err := os.Stat(clean)
		if err != nil {
			t.Errorf("%s: link %q: %v", from, target+fragment, err)
			return
		}
		if fragment == "" {
			return
		}
		if info.IsDir() || !strings.HasSuffix(clean, ".md") {
			t.Errorf("%s: link %q: a fragment on something that is not a Markdown file", from, target+fragment)
			return
		}
		if !anchorsOf(t, clean, cache)[strings.TrimPrefix(fragment, "#")] {
			t.Errorf("%s: link %q: %s has no anchor %s", from, target+fragment, clean, fragment)
		}
	}

	for _, md := range repoFiles(t, ".md") {
		data, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLinkRE.FindAllStringSubmatch(string(data), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, fragment, _ := strings.Cut(link, "#")
			if fragment != "" {
				fragment = "#" + fragment
			}
			if target == "" {
				target = md
			} else {
				target = filepath.Join(filepath.Dir(md), target)
			}
			check(md, target, fragment)
		}
	}
	for _, src := range repoFiles(t, ".go") {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goCiteRE.FindAllStringSubmatch(string(data), -1) {
			check(src, m[1], m[2])
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d links and citations; the scan is broken", checked)
	}
}

func TestNothingPointsOutsideTheRepository(t *testing.T) {
	t.Parallel()
	for _, f := range repoFiles(t, ".go", ".md", ".sh", ".yaml", ".sbatch", "run") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "../"+"shared") {
			t.Errorf("%s refers to ../%s, outside the repository", f, "shared")
		}
	}
}

func TestHeadingSlug(t *testing.T) {
	t.Parallel()
	for heading, want := range map[string]string{
		" The two commands":                       "the-two-commands",
		"What a 10,000-rank job pays":             "what-a-10000-rank-job-pays",
		"`lens exec`: the wrapper's instance id":  "lens-exec-the-wrappers-instance-id",
		"Compatibility with the Python reference": "compatibility-with-the-python-reference",
	} {
		if got := headingSlug(heading); got != want {
			t.Errorf("headingSlug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestDocsIndexListsEveryAnchor: every explicit anchor (<a id>) of a page
// of docs/ is listed in docs/README.md's index as page.md#anchor, so that
// the index cannot fall behind the rules it indexes.
func TestDocsIndexListsEveryAnchor(t *testing.T) {
	t.Parallel()
	index, err := os.ReadFile("docs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, page := range pages {
		if filepath.Base(page) == "README.md" {
			continue
		}
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range explicitRE.FindAllStringSubmatch(string(data), -1) {
			checked++
			if ref := filepath.Base(page) + "#" + m[1]; !strings.Contains(string(index), "("+ref+")") {
				t.Errorf("docs/README.md does not list %s", ref)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d anchors checked", checked)
	}
}

// TestReadmeNamesDirectDependencies: the README's sentence on the main
// module's dependencies names the family of every direct requirement of
// go.mod, so that a new dependency cannot go unsaid.
func TestReadmeNamesDirectDependencies(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sentence, _ := strings.Cut(strings.Join(strings.Fields(string(readme)), " "), "The main module's direct dependencies are ")
	sentence, _, _ = strings.Cut(sentence, ";")
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	families := map[string]string{ // module path prefix: the README's name
		"go.opentelemetry.io/":       "OpenTelemetry",
		"google.golang.org/grpc":     "gRPC",
		"google.golang.org/protobuf": "protobuf",
		"github.com/go-logr/":        "logr",
	}
	direct := 0
	for line := range strings.SplitSeq(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.Contains(line, "// indirect") || !strings.Contains(f[0], ".") || f[0] == "module" {
			continue
		}
		direct++
		named := false
		for prefix, name := range families {
			if strings.HasPrefix(f[0], prefix) {
				named = strings.Contains(sentence, name)
			}
		}
		if !named {
			t.Errorf("go.mod requires %s directly; the README's dependency sentence (%q) does not name it", f[0], sentence)
		}
	}
	if direct < 10 {
		t.Errorf("only %d direct requirements read from go.mod", direct)
	}
}

package lens_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestShippedCodeHasNoTestSupport: no package of the main module that is
// built into the library or the lens command depends on test support (the
// conformance-vector loader internal/testvectors, the OTLP receivers of
// internal/collectortest, the hostile inputs of internal/faulttest, the
// scale inputs and instruction counts of internal/scalegen and
// internal/callgrind, or package testing).
func TestShippedCodeHasNoTestSupport(t *testing.T) {
	t.Parallel()
	goBin := goCommand(t)
	const module = "github.com/nemolens/lens-go"
	// What ships: the public packages (no internal/ in their path) and the
	// lens command, with everything they import.
	all, err := exec.Command(goBin, "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var roots []string
	for pkg := range strings.FieldsSeq(string(all)) {
		if !strings.Contains(pkg, "/internal/") || pkg == module+"/cmd/lens" {
			roots = append(roots, pkg)
		}
	}
	out, err := exec.Command(goBin, append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}, roots...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		checked++
		deps := strings.Fields(imports)
		for _, bad := range []string{
			module + "/internal/testvectors", module + "/internal/collectortest",
			module + "/internal/faulttest", module + "/internal/scalegen", module + "/internal/callgrind",
			module + "/internal/mdblock",
			"testing",
		} {
			if slices.Contains(deps, bad) {
				t.Errorf("%s imports %s", pkg, bad)
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d lens-go packages listed; go list output:\n%s", checked, out)
	}
}

// TestCLIDoesNotLinkLogs: the lens command exports one span and, with
// lens exec's opt-in per-rank metrics (docs/usage.md#metrics), metrics; it
// is built on internal/telemetry, not on the root package, so that it does
// not link (and initialise at every start) the log SDK and exporters. The
// metric SDK is reached through one file, cmd/lens/execmetrics.go, so that
// no other command's code calls it (linking it costs every command its
// package initialisers: docs/performance.md#metric-sdk-start-up).
func TestCLIDoesNotLinkLogs(t *testing.T) {
	t.Parallel()
	goBin := goCommand(t)
	out, err := exec.Command(goBin, "list", "-deps", "./cmd/lens").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, want := range []string{
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc",
		"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc",
	} {
		if !slices.Contains(deps, want) {
			t.Fatalf("lens does not link %s; go list output:\n%s", want, out)
		}
	}
	for _, dep := range deps {
		if dep == "github.com/nemolens/lens-go" ||
			strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk/log") ||
			strings.Contains(dep, "/otlplog") ||
			strings.HasPrefix(dep, "go.opentelemetry.io/proto/otlp/logs") {
			t.Errorf("lens links %s", dep)
		}
	}
	metricImports := []string{"github.com/nemolens/lens-go/internal/telemetry/metrics", "go.opentelemetry.io/otel/sdk/metric"}
	found := false
	for path, f := range shippedFiles(t) {
		if !strings.HasPrefix(path, "cmd/lens/") {
			continue
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(metricImports, p) {
				continue
			}
			if path != "cmd/lens/execmetrics.go" {
				t.Errorf("%s imports %s; only cmd/lens/execmetrics.go may", path, p)
			}
			found = true
		}
	}
	if !found {
		t.Error("cmd/lens/execmetrics.go imports no metric package: the check no longer sees it")
	}
}

// shippedFiles parses the non-test Go files of the main module that are not
// test support (the packages TestShippedCodeHasNoTestSupport lists), for
// every platform, and returns them by slash-separated path. Nested modules
// (e2e, tools/...) and testdata are skipped.
func shippedFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	testSupport := []string{"internal/testvectors", "internal/collectortest", "internal/faulttest", "internal/scalegen", "internal/callgrind", "internal/mdblock"}
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		slashed := filepath.ToSlash(path)
		if d.IsDir() {
			if path == "." {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || name == "testdata" || slices.Contains(testSupport, slashed) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files[slashed] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("only %d shipped Go files found", len(files))
	}
	return files
}

// TestRankVariablesOnlyInDetect: the launcher variables that give the ranks
// (docs/detection.md#detect-ranks) are named, as Go string constants, only
// in package detect, beside the detectors: not in internal/telemetry, the
// lens command or the root package, which call detect.Ranks.
func TestRankVariablesOnlyInDetect(t *testing.T) {
	t.Parallel()
	rankVariables := []string{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "RANK", "WORLD_SIZE", "LOCAL_RANK", "JOB_COMPLETION_INDEX"}
	seen := map[string]bool{}
	for path, f := range shippedFiles(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil || !slices.Contains(rankVariables, v) {
				return true
			}
			seen[v] = true
			if !strings.HasPrefix(path, "detect/") {
				t.Errorf("%s names the rank variable %s; it belongs in package detect", path, v)
			}
			return true
		})
	}
	for _, v := range rankVariables {
		if !seen[v] {
			t.Errorf("no shipped file names %s: the check no longer sees the rank variables", v)
		}
	}
}

// TestPythonTextRulesOnlyInPytext: Python's str.strip whitespace, the strict
// integer rule and Python's int() (docs/compatibility.md#whitespace,
// #integer-rule, #python-int) are implemented once, in internal/pytext; no
// other package declares (or re-exports) a function of that name.
func TestPythonTextRulesOnlyInPytext(t *testing.T) {
	t.Parallel()
	names := []string{"IsSpace", "TrimSpace", "ParseInt", "IsIntSpace", "TrimIntSpace", "IntText",
		"isPyIntSpace", "trimPyIntSpace", "pyIntText", "pyInt"}
	found := 0
	for path, f := range shippedFiles(t) {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !slices.Contains(names, fn.Name.Name) {
				continue
			}
			if strings.HasPrefix(path, "internal/pytext/") {
				found++
				continue
			}
			t.Errorf("%s declares %s; the Python text rules live in internal/pytext", path, fn.Name.Name)
		}
	}
	if found < 5 {
		t.Errorf("internal/pytext declares %d of %v: the check no longer sees them", found, names)
	}
}

// TestImportGrouping: in every Go file of the repository (all modules),
// lens-go's own imports (github.com/nemolens/lens-go/...) form one group,
// the last one, after the standard library and third-party groups.
func TestImportGrouping(t *testing.T) {
	t.Parallel()
	const own = "github.com/nemolens/lens-go"
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		slashed := filepath.ToSlash(path)
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		// groups[i] lists whether each import of blank-line group i is lens-go's.
		var groups [][]bool
		prevEnd := -1
		for _, spec := range f.Imports {
			start := spec.Pos()
			if spec.Doc != nil {
				start = spec.Doc.Pos()
			}
			if line := fset.Position(start).Line; prevEnd < 0 || line > prevEnd+1 {
				groups = append(groups, nil)
			}
			prevEnd = fset.Position(spec.End()).Line
			p, _ := strconv.Unquote(spec.Path.Value)
			groups[len(groups)-1] = append(groups[len(groups)-1], p == own || strings.HasPrefix(p, own+"/"))
		}
		for i, g := range groups {
			hasOwn, allOwn := slices.Contains(g, true), !slices.Contains(g, false)
			if hasOwn && (!allOwn || i != len(groups)-1) {
				t.Errorf("%s: lens-go's imports must be one group, the last one, alone (import group %d of %d mixes or precedes others)", slashed, i+1, len(groups))
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Errorf("only %d Go files checked", checked)
	}
}

// TestInternalConcernsApart: no package under internal/ both builds
// exporters or providers (imports an OpenTelemetry exporter or the SDK's
// trace, metric or log package) and reads the environment's resource
// (imports lens-go's detect or carrier): the telemetry engine and the
// resource assembly are separate (docs/architecture.md).
func TestInternalConcernsApart(t *testing.T) {
	t.Parallel()
	goBin := goCommand(t)
	out, err := exec.Command(goBin, "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/nemolens/lens-go"
	checked := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		checked++
		var builds, reads []string
		for imp := range strings.FieldsSeq(imports) {
			switch {
			case strings.HasPrefix(imp, "go.opentelemetry.io/otel/exporters/"),
				imp == "go.opentelemetry.io/otel/sdk/trace", imp == "go.opentelemetry.io/otel/sdk/metric",
				imp == "go.opentelemetry.io/otel/sdk/log":
				builds = append(builds, imp)
			case imp == module+"/detect", imp == module+"/carrier":
				reads = append(reads, imp)
			}
		}
		if len(builds) > 0 && len(reads) > 0 {
			t.Errorf("%s both builds telemetry (%s) and reads the resource (%s)", pkg, strings.Join(builds, ", "), strings.Join(reads, ", "))
		}
	}
	if checked < 5 {
		t.Errorf("only %d internal packages listed", checked)
	}
}

// goCommand returns the go command's path; without one the test is skipped,
// or fails under CI.
func goCommand(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the go command is needed: %v", err)
		}
		t.Skipf("skipping: no go command: %v", err)
	}
	return goBin
}

// TestRootFilesOneWay: inside the root package, no two files use each
// other's unexported names (functions, types, variables, constants, and the
// methods and fields of the types they declare) both ways
// (docs/architecture.md#the-root-package).
func TestRootFilesOneWay(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgFiles, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	type file struct {
		name string
		ast  *ast.File
	}
	var files []file
	top := map[string]string{}       // unexported package-level name → file
	members := map[string][]string{} // unexported method or field name → files
	for _, name := range pkgFiles {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, file{name, f})
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					if !d.Name.IsExported() {
						members[d.Name.Name] = append(members[d.Name.Name], name)
					}
				} else if !d.Name.IsExported() {
					top[d.Name.Name] = name
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							top[s.Name.Name] = name
						}
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									if !n.IsExported() {
										members[n.Name] = append(members[n.Name], name)
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if !n.IsExported() && n.Name != "_" {
								top[n.Name] = name
							}
						}
					}
				}
			}
		}
	}
	uses := map[[2]string][]string{} // {user, declarer} → names
	for _, f := range files {
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if !n.Sel.IsExported() {
					if decl := members[n.Sel.Name]; len(decl) == 1 && decl[0] != f.name {
						uses[[2]string{f.name, decl[0]}] = append(uses[[2]string{f.name, decl[0]}], n.Sel.Name)
					}
				}
			case *ast.Ident:
				// Obj is nil for identifiers the parser did not resolve in
				// this file: package-level names of other files.
				if decl, ok := top[n.Name]; ok && n.Obj == nil && decl != f.name {
					uses[[2]string{f.name, decl}] = append(uses[[2]string{f.name, decl}], n.Name)
				}
			}
			return true
		})
	}
	for k, names := range uses {
		if back, ok := uses[[2]string{k[1], k[0]}]; ok && k[0] < k[1] {
			slices.Sort(names)
			slices.Sort(back)
			t.Errorf("%s and %s use each other's unexported names: %s uses %v; %s uses %v",
				k[0], k[1], k[0], slices.Compact(names), k[1], slices.Compact(back))
		}
	}
}

// TestReadsAreBounded: shipped code opens files only through
// internal/bounded (docs/exec.md#what-runs-where), which never waits on a
// FIFO, a device or a socket and caps what it reads; the few opens
// elsewhere are listed here with the reason each cannot block. A new
// os.ReadFile, os.Open or os.OpenFile anywhere else fails this test: a
// bound by design, not one call at a time.
func TestReadsAreBounded(t *testing.T) {
	t.Parallel()
	allowed := map[string]string{
		"internal/bounded/file.go":         "the bounded open itself",
		"internal/rounds/private_unix.go":  "the record: O_NONBLOCK|O_NOFOLLOW, then fstat refuses all but a regular file",
		"internal/rounds/private_other.go": "the record outside Unix (no FIFO semantics to guard)",
		"internal/taskprolog/file.go":      "the log file, opened to append: O_NONBLOCK|O_NOFOLLOW, then fstat refuses all but a regular file",
	}
	seen := map[string]bool{}
	for path, f := range shippedFiles(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || (pkg.Name != "os" && pkg.Name != "ioutil") {
				return true
			}
			switch sel.Sel.Name {
			case "ReadFile", "Open", "OpenFile":
			default:
				return true
			}
			if _, ok := allowed[path]; ok {
				seen[path] = true
				return true
			}
			t.Errorf("%s calls %s.%s: read through internal/bounded (bounded.Open, bounded.ReadFile), which never blocks on what is not a regular file", path, pkg.Name, sel.Sel.Name)
			return true
		})
	}
	for path := range allowed {
		if !seen[path] {
			t.Errorf("%s is allowed to open files but opens none: the check no longer sees it, or the entry is stale", path)
		}
	}
}

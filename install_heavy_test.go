//go:build heavy

package lens_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/internal/mdblock"
)

// TestInstallDocs runs the install commands of docs/install.md and the
// README as written
// (the blocks marked <!-- test: … -->, internal/mdblock), in order, the way
// a newcomer pastes them: git clone (the GitHub URL, redirected by git's
// url.insteadOf to a repository holding this commit), go install ./cmd/lens
// and lens --version; the library from the clone with the README's snippets
// as the program's code, built and run; then the release archives built by
// scripts/release.sh in that clone, checked, unpacked and run.
//
// The expected version is computed here from git: the pseudo-version the go
// command gives an untagged commit.
func TestInstallDocs(t *testing.T) {
	t.Parallel()
	goBin := goCommand(t)
	gitBin, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git is needed: %v", err)
		}
		t.Skipf("skipping: no git: %v", err)
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command(gitBin, append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := git(".", "rev-parse", "HEAD")
	common := git(".", "rev-parse", "--path-format=absolute", "--git-common-dir")
	epoch := git(".", "log", "-1", "--format=%ct", "HEAD")

	tmp := t.TempDir()
	// The repository the documented URL leads to: this commit, as its HEAD,
	// without tags (the version the docs show is that of an untagged commit).
	src := filepath.Join(tmp, "lens-go.git")
	git(".", "clone", "-q", "--bare", "--shared", "--no-tags", common, src)
	git(src, "update-ref", "refs/heads/under-test", commit)
	git(src, "symbolic-ref", "HEAD", "refs/heads/under-test")
	for _, tag := range strings.Fields(git(src, "tag", "-l")) {
		git(src, "tag", "-d", tag)
	}

	gobin := filepath.Join(tmp, "bin")
	env := []string{
		"PATH=" + gobin + string(os.PathListSeparator) + os.Getenv("PATH") + string(os.PathListSeparator) + filepath.Dir(goBin),
		"HOME=" + os.Getenv("HOME"),
		"GOBIN=" + gobin,
		"GOFLAGS=-buildvcs=auto", // not a -buildvcs=false of the machine's go env
		"GOTOOLCHAIN=local",
		// The documented URL, and the one the go command uses for the
		// module path (git takes the longest prefix that matches).
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=url.file://" + src + ".insteadOf",
		"GIT_CONFIG_VALUE_0=https://github.com/nemolens/lens-go.git",
		"GIT_CONFIG_KEY_1=url.file://" + src + ".insteadOf",
		"GIT_CONFIG_VALUE_1=https://github.com/nemolens/lens-go",
	}
	// The machine's module settings: on a cold cache the documented go get
	// downloads go.mod files that building lens-go itself never needed (the
	// graph of a module that requires lens-go is wider than lens-go's own).
	// lens-go itself is private: its versions come from the repository the
	// documented URL leads to (git, through the insteadOf above), not from a
	// proxy, where no version of it is published.
	env = append(env, "GOPRIVATE=github.com/nemolens/lens-go")
	// plain is a newcomer's shell: the machine's own go env (its caches
	// and proxy, as go env reports them), no GOPRIVATE, no insteadOf, no
	// GOFLAGS of the test's: the library's block must work with it.
	plain := []string{
		"PATH=" + os.Getenv("PATH") + string(os.PathListSeparator) + filepath.Dir(goBin),
		"HOME=" + os.Getenv("HOME"),
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "TMPDIR", "GOPROXY", "GOSUMDB", "GOINSECURE"} {
		v, err := exec.Command(goBin, "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		if s := strings.TrimSpace(string(v)); s != "" {
			env = append(env, k+"="+s)
			plain = append(plain, k+"="+s)
		}
	}
	// sh runs blocks with bash in dir, env (plain while plainEnv is set)
	// plus extra, and returns stdout.
	plainEnv := false
	sh := func(dir string, extra []string, blocks ...mdblock.Block) string {
		t.Helper()
		cmd := exec.Command("bash", "-c", mdblock.Script(blocks...))
		cmd.Dir = dir
		cmd.Env = append(append([]string{}, env...), extra...)
		if plainEnv {
			cmd.Env = append(append([]string{}, plain...), extra...)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\nstdout:\n%s\nstderr:\n%s", blocks, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	named := func(path, name string) []mdblock.Block {
		t.Helper()
		b, err := mdblock.Named(path, name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sec := 0
	if _, err := fmt.Sscan(epoch, &sec); err != nil {
		t.Fatal(err)
	}
	pseudo := "v0.0.0-" + time.Unix(int64(sec), 0).UTC().Format("20060102150405") + "-" + commit[:12]

	// From a clone: git clone, go install, lens --version.
	out := sh(tmp, nil, named("docs/install.md", "install-clone")...)
	if want := "lens " + pseudo + "\ncommit: " + commit + "\nmodified: false\n"; !strings.HasPrefix(out, want) {
		t.Errorf("install-clone printed:\n%s\nwant it to start with:\n%s", out, want)
	}
	clone := filepath.Join(tmp, "lens-go")

	// The README's short form of the same, in another directory.
	readme := filepath.Join(tmp, "readme")
	if err := os.MkdirAll(readme, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(gobin, "lens")); err != nil {
		t.Fatal(err)
	}
	sh(readme, nil, named("README.md", "readme-install")...)
	if out, err := exec.Command(filepath.Join(gobin, "lens"), "--version").Output(); err != nil || !strings.HasPrefix(string(out), "lens "+pseudo+"\n") {
		t.Errorf("readme-install: lens --version: %v, %q; want lens %s", err, out, pseudo)
	}

	// The library from the clone: the README's snippets as a program beside it.
	app := filepath.Join(tmp, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	var code strings.Builder
	code.WriteString("package main\n\n")
	for _, b := range named("README.md", "readme-library") {
		code.WriteString(b.Text + "\n")
	}
	code.WriteString("func main() {\n\tif err := train(context.Background(), 0, 1); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n")
	for name, text := range map[string]string{
		"go.mod":  "module example.com/app\n\ngo 1.26\n",
		"main.go": code.String(),
	} {
		if err := os.WriteFile(filepath.Join(app, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The library's block as a newcomer pastes it: a bare module path in
	// go get is a version query, which asks the proxy (403 for a module
	// that has none) even with the replace; the block must not need it.
	plainEnv = true
	sh(app, nil, named("docs/install.md", "library-clone")...)
	plainEnv = false
	sh(app, nil, mdblock.Block{Name: "build the program", File: "install_test.go", Text: "go vet . && go build -o app .\n"})
	// And it runs as the README says: the worker (sh, which prints what it
	// got) gets the rank and the role, carried as trainer%2Ca, the run id
	// of the process and the context of its span.
	out = sh(app, []string{"NEMO_LENS_ENABLED=true", "NEMO_LENS_EXPORTER=console"},
		mdblock.Block{Name: "run the program", File: "install_test.go", Text: "./app\n"})
	worker := regexp.MustCompile(`(?m)^worker (.*)$`).FindAllStringSubmatch(out, -1)
	span := regexp.MustCompile(`"SpanContext":\{"TraceID":"([0-9a-f]{32})","SpanID":"([0-9a-f]{16})"`).FindStringSubmatch(out)
	runID := regexp.MustCompile(`"nemo.run.id","Value":\{"Type":"STRING","Value":"([^"]+)"`).FindStringSubmatch(out)
	if len(worker) != 3 || span == nil || runID == nil {
		t.Fatalf("the README's program printed no worker lines or no span:\n%s", out)
	}
	if got := worker[0][1]; !strings.HasPrefix(got, "nv.dl.rank=0,nv.dl.role=trainer%2Ca,") {
		t.Errorf("the worker's carrier is %q; want nv.dl.rank=0 and nv.dl.role=trainer%%2Ca first", got)
	}
	if got := worker[1][1]; got != runID[1] {
		t.Errorf("the worker's NEMO_LENS_RUN_ID is %q; the span's nemo.run.id %q", got, runID[1])
	}
	if got, want := worker[2][1], "00-"+span[1]+"-"+span[2]+"-01"; got != want {
		t.Errorf("the worker's TRACEPARENT is %q; want the span's %q", got, want)
	}

	// The release archives: scripts/release.sh in the clone, then check,
	// unpack and run as a download.
	script := append(named("docs/install.md", "release-build"), named("docs/install.md", "install-archive")...)
	out = sh(clone, nil, script...)
	if !regexp.MustCompile(`(?m)^lens_` + regexp.QuoteMeta(pseudo) + `_linux_` + runtime.GOARCH + `\.tar\.gz: OK$`).MatchString(out) {
		t.Errorf("install-archive: no OK for the archive of %s:\n%s", pseudo, out)
	}
	if !strings.Contains(out, "\nlens "+pseudo+"\ncommit: "+commit+"\nmodified: false\n") {
		t.Errorf("install-archive: the unpacked binary does not say lens %s, commit %s:\n%s", pseudo, commit, out)
	}
	// … and the TaskProlog's wrapper and example policy (docs/taskprolog.md#slurm-conf).
	for _, f := range []string{"LICENSE", "THIRD_PARTY_LICENSES.txt", "INSTALL.md", "lens-taskprolog.sh", "taskprolog.conf"} {
		if _, err := os.Stat(filepath.Join(clone, "dist", "lens_"+pseudo+"_linux_"+runtime.GOARCH, f)); err != nil {
			t.Errorf("the archive lacks %s: %v", f, err)
		}
	}
}

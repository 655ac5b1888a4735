package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun: the table from a JSON report and from a log cut short, the kill
// rate killed / (killed + survived), the survivors with their source line,
// and -min's exit status.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pkg", "a.go"), []byte("package pkg\n\nvar x = 1 < 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "pkg.json")
	if err := os.WriteFile(js, []byte(`{"files":[{"file_name":"a.go","mutations":[
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":3,"column":11},
		{"type":"CONDITIONALS_NEGATION","status":"KILLED","line":3,"column":11},
		{"type":"CONDITIONALS_NEGATION","status":"KILLED","line":3,"column":11},
		{"type":"CONDITIONALS_NEGATION","status":"KILLED","line":3,"column":11},
		{"type":"ARITHMETIC_BASE","status":"TIMED OUT","line":3,"column":9},
		{"type":"ARITHMETIC_BASE","status":"NOT COVERED","line":3,"column":9}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "other.log")
	if err := os.WriteFile(log, []byte("Starting...\nGathering coverage... done in 1s\n"+
		"      KILLED INVERT_LOGICAL at b.go:4:2\n       LIVED INVERT_LOOPCTRL at b.go:5:3\nShutting down gracefully...\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"-survivors", "-min", "60", "-root", dir, "pkg=" + js, "other=" + log}, &out, &errOut)
	for _, want := range []string{
		"pkg                                6      3        1         1           1          0    75.0 %",
		"other (partial)                    2      1        1         0           0          0    50.0 %",
		"all of the above                   8      4        2         1           1          0    66.7 %",
		"  pkg/a.go:3:11 CONDITIONALS_BOUNDARY\n      var x = 1 < 2\n",
		"  other/b.go:5:3 INVERT_LOOPCTRL\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code != 1 || !strings.Contains(errOut.String(), "other (partial) (50.0 %)") {
		t.Errorf("exit %d, stderr %q; want 1 naming other below 60 %%", code, errOut.String())
	}
	if code := run([]string{"pkg=" + filepath.Join(dir, "missing.json")}, &out, &errOut); code != 2 {
		t.Errorf("a missing report: exit %d, want 2", code)
	}
}

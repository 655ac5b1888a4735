package telemetry

import (
	"runtime/debug"
	"testing"
)

func TestModuleVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"main-devel", debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}}, "(devel)"},
		{"main-tagged", debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v1.2.3"}}, "v1.2.3"},
		{"main-empty", debug.BuildInfo{Main: debug.Module{Path: ModulePath}}, DevelVersion},
		{"dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: "other", Version: "v9"}, {Path: ModulePath, Version: "v0.4.0"}}}, "v0.4.0"},
		{"replaced", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: ModulePath, Version: "v0.4.0", Replace: &debug.Module{Path: "../lens-go", Version: ""}}}}, "v0.4.0"},
		{"replaced-versioned", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: ModulePath, Version: "v0.4.0", Replace: &debug.Module{Path: "fork", Version: "v0.4.1"}}}}, "v0.4.1"},
		{"absent", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"}}, DevelVersion},
	} {
		if got := ModuleVersion(&tc.info); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if Version() == "" {
		t.Error("empty Version()")
	}
}

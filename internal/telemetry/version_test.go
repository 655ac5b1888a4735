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

func TestDescribe(t *testing.T) {
	t.Parallel()
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name  string
		info  *debug.BuildInfo
		stamp Stamp
		want  Build
	}{
		{"no-build-info", nil, Stamp{Version: "v1.0.0", Commit: "ff", Modified: "false"},
			Build{Version: DevelVersion}},
		{"devel", &debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}}, Stamp{},
			Build{Version: DevelVersion}},
		{"go-stamped-vcs", &debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v0.0.0-20260101000000-0123abcd0123+dirty"}, Settings: vcs}, Stamp{},
			Build{Version: "v0.0.0-20260101000000-0123abcd0123+dirty", Commit: "0123abcd", Modified: "true"}},
		{"release-stamp", &debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}},
			Stamp{Version: "v0.4.0", Commit: "feedface", Modified: "false"},
			Build{Version: "v0.4.0", Commit: "feedface", Modified: "false"}},
		{"stamp-over-vcs", &debug.BuildInfo{Main: debug.Module{Path: ModulePath}, Settings: vcs},
			Stamp{Version: "v0.4.1", Commit: "feedface", Modified: "false"},
			Build{Version: "v0.4.1", Commit: "feedface", Modified: "false"}},
		{"partial-stamp", &debug.BuildInfo{Main: debug.Module{Path: ModulePath}, Settings: vcs},
			Stamp{Version: "v0.4.2"},
			Build{Version: "v0.4.2", Commit: "0123abcd", Modified: "true"}},
		// As a dependency, lens-go's version comes from the module system:
		// neither a stamp nor the main module's vcs settings apply.
		{"dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v2.0.0"}, Settings: vcs,
			Deps: []*debug.Module{{Path: ModulePath, Version: "v0.3.0"}}},
			Stamp{Version: "v9.9.9", Commit: "feedface", Modified: "false"},
			Build{Version: "v0.3.0"}},
	} {
		tc.want.GoVersion, tc.want.Platform = "go1.99", "plan9/arm"
		if got := Describe(tc.info, tc.stamp, "go1.99", "plan9/arm"); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if b := BuildOf(); b.Version != Version() || b.GoVersion == "" || b.Platform == "" {
		t.Errorf("BuildOf() = %+v, Version() = %q", b, Version())
	}
}

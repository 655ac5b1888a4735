package telemetry

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// ModulePath is the module whose version becomes service.version.
const ModulePath = "github.com/nemolens/lens-go"

// DevelVersion is the version of a build without module version.
const DevelVersion = "(devel)"

// The release build (scripts/release.sh, docs/install.md#stamp) stamps these
// with the linker's -X flag, for example
//
//	-X github.com/nemolens/lens-go/internal/telemetry.stampVersion=v0.4.0
//
// They take effect only when lens-go is the main module (the lens binary):
// as a dependency of another module, lens-go's version comes from the module
// system. Empty: not stamped. stampModified is "true" or "false".
var (
	stampVersion  string
	stampCommit   string
	stampModified string
)

// Version returns lens-go's version (see lens.Version): the release stamp
// when the main module is lens-go and was stamped, else the module version.
func Version() string { return buildOnce().Version }

// Build describes the binary, as lens --version prints it
// (docs/install.md#version).
type Build struct {
	// Version is the value of Version.
	Version string
	// Commit is the commit the binary was built from: the release stamp,
	// else the go command's vcs.revision; "" when unknown.
	Commit string
	// Modified says whether the working tree differed from Commit: "true",
	// "false", or "" when unknown.
	Modified string
	// GoVersion is the Go toolchain that built the binary (runtime.Version).
	GoVersion string
	// Platform is GOOS/GOARCH.
	Platform string
}

// Stamp is the linker stamp of a release build: empty fields when not stamped.
type Stamp struct{ Version, Commit, Modified string }

// BuildOf returns the binary's description.
func BuildOf() Build { return buildOnce() }

var buildOnce = sync.OnceValue(func() Build {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return Describe(info, Stamp{stampVersion, stampCommit, stampModified}, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
})

// Describe combines the build information (nil when the binary has none) and
// the release stamp into a Build. The stamp is used only when the main module
// is lens-go; each stamped field replaces what the build information says.
// Commit and Modified are known only when lens-go is the main module.
func Describe(info *debug.BuildInfo, stamp Stamp, goVersion, platform string) Build {
	b := Build{Version: DevelVersion, GoVersion: goVersion, Platform: platform}
	if info == nil {
		return b
	}
	b.Version = ModuleVersion(info)
	if info.Main.Path != ModulePath {
		return b // the vcs.* settings are another module's
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value
		}
	}
	if stamp.Version != "" {
		b.Version = stamp.Version
	}
	if stamp.Commit != "" {
		b.Commit = stamp.Commit
	}
	if stamp.Modified != "" {
		b.Modified = stamp.Modified
	}
	return b
}

// ModuleVersion returns the version of lens-go in info: the main module's
// when lens-go is the main module, else the dependency's (the replacement's
// version when it is replaced), else DevelVersion.
func ModuleVersion(info *debug.BuildInfo) string {
	pick := func(m *debug.Module) string {
		if m.Replace != nil && m.Replace.Version != "" {
			return m.Replace.Version
		}
		if m.Version != "" {
			return m.Version
		}
		return DevelVersion
	}
	if info.Main.Path == ModulePath {
		return pick(&info.Main)
	}
	for _, d := range info.Deps {
		if d.Path == ModulePath {
			return pick(d)
		}
	}
	return DevelVersion
}

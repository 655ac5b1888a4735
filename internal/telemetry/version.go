package telemetry

import (
	"runtime/debug"
	"sync"
)

// ModulePath is the module whose version becomes service.version.
const ModulePath = "github.com/nemolens/lens-go"

// DevelVersion is the version of a build without module version.
const DevelVersion = "(devel)"

// Version returns lens-go's module version (see lens.Version).
func Version() string { return versionOnce() }

var versionOnce = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return DevelVersion
	}
	return ModuleVersion(info)
})

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

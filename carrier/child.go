package carrier

import (
	"os"
	"strings"

	"github.com/nemolens/lens-go/attr"
)

// ChildEnv returns an environment for exec.Cmd.Env: environ (nil: the
// process environment, os.Environ()) with its carrier replaced by
// Extend(current carrier, defaults, overrides). The process environment is
// never modified, so any number of goroutines may build child environments
// at once. This is how Go programs should hand resource attributes to the
// processes they start.
//
// As in os/exec, the last OTEL_RESOURCE_ATTRIBUTES entry of environ is the
// current carrier; all entries of it are removed and the composed one is
// appended. The variable is set even when the composed text is empty.
func ChildEnv(environ []string, defaults, overrides *attr.Map) ([]string, []Dropped) {
	if environ == nil {
		environ = os.Environ()
	}
	const prefix = EnvVar + "="
	current := ""
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, prefix); ok {
			current = v
			continue
		}
		out = append(out, kv)
	}
	text, dropped := Extend(current, defaults, overrides)
	return append(out, prefix+text), dropped
}

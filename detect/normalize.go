package detect

import (
	"log/slog"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/logx"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/lensconv"
)

// Normalize is the reference's normalize_resource_attributes, the type
// reconstruction of carrier strings (docs/detection.md#type-reconstruction).
// It returns a copy of m (in m's order; m is not modified) and the keys it
// kept unchanged with a warning, in order.
//
//   - Keys of the Slurm type map (the 23 [lensconv.InheritedKeys]) are left
//     untouched: detection has already typed them ({slurm.nnodes: "8"} stays
//     "8").
//   - Integer fields ([lensconv.IntegerKeys]: nv.dl.rank, nv.dl.world_size,
//     …, nv.gpu.memory_total) follow the strict integer rule
//     (docs/compatibility.md#integer-rule): an int64 stays, a string that
//     passes becomes an int64; anything else — a string that fails (e.g.
//     "1_0", "3.5"), a bool, a float, null — is kept as it is and a WARNING
//     is logged (logger
//     "nemo.lens.semconv.resources") saying that the key requires a base-10
//     integer and that the invalid value is preserved.
//   - String fields ([lensconv.StringKeys]) are stringified as the carrier
//     would (True/False, base-10 integers, Python float repr:
//     docs/compatibility.md#value-stringification).
//   - Other keys are untouched; nothing is inferred ("007" stays "007").
//
// Port decisions: integers beyond int64 fail the rule and are kept as
// strings with a warning (Python's ints are unbounded;
// docs/compatibility.md#divergence-int64); a null value of a string field
// stays null (Python's str(None) would give "None"; null values never reach
// a resource anyway: docs/compatibility.md#divergence-normalize-null).
//
// Options used: WithLogger.
func Normalize(m *attr.Map, opts ...Option) (out *attr.Map, warned []string) {
	logger := newConfig(opts).logger
	// The copy has m's keys in m's order; only the values that change are
	// set again.
	out = m.Clone()
	var l *slog.Logger
	for k, v := range m.All() {
		switch {
		case lensconv.IsInheritedKey(k):
		case lensconv.IsIntegerKey(k):
			if n, ok := normalizeInt(v); ok {
				if v.Kind() != attr.KindInt64 {
					out.Set(k, attr.Int64(n))
				}
				break
			}
			if l == nil {
				l = logx.Logger(logger, logx.Semconv)
			}
			l.Warn("resource attribute "+k+" requires a base-10 integer; the invalid value is preserved",
				"key", k, "value", v.String(), "kind", v.Kind().String())
			warned = append(warned, k)
		case lensconv.IsStringKey(k):
			if v.Kind() != attr.KindString && !v.IsNull() {
				t, _ := v.Text()
				out.Set(k, attr.String(t))
			}
		}
	}
	return out, warned
}

// normalizeInt applies the strict integer rule to a value: an int64 passes,
// a string must parse, everything else (bool included) fails.
func normalizeInt(v attr.Value) (int64, bool) {
	switch v.Kind() {
	case attr.KindInt64:
		return v.AsInt64(), true
	case attr.KindString:
		n, err := pytext.ParseInt(v.AsString())
		return n, err == nil
	}
	return 0, false
}

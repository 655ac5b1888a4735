package carrier_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/testvectors"
)

func droppedKeys(d []carrier.Dropped) []string {
	keys := []string{}
	for _, x := range d {
		keys = append(keys, x.Key)
	}
	return keys
}

func wantDropped(v testvectors.Vector) []string {
	if v.Dropped == nil {
		return []string{}
	}
	return v.Dropped
}

func TestVectorsParse(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "parse") {
		t.Run(v.ID, func(t *testing.T) {
			text, _, err := v.Text()
			if err != nil {
				t.Fatal(err)
			}
			want, err := v.ExpectedMap()
			if err != nil {
				t.Fatal(err)
			}
			if got := carrier.Parse(text); !got.Equal(want) {
				t.Errorf("Parse(%q)\n got %v\nwant %v", text, got, want)
			}
		})
	}
}

func TestVectorsFormat(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "format") {
		t.Run(v.ID, func(t *testing.T) {
			in, err := v.InputMap()
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := v.ExpectedString()
			if err != nil {
				t.Fatal(err)
			}
			before := in.Clone()
			got, dropped := carrier.Format(in)
			if got != want {
				t.Errorf("Format(%v) = %q, want %q", in, got, want)
			}
			if !slices.Equal(droppedKeys(dropped), wantDropped(v)) {
				t.Errorf("dropped %v, want %v", droppedKeys(dropped), wantDropped(v))
			}
			if !in.Equal(before) {
				t.Errorf("Format modified its input")
			}
		})
	}
}

func TestVectorsCompose(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "compose") {
		t.Run(v.ID, func(t *testing.T) {
			want, err := v.ExpectedMap()
			if err != nil {
				t.Fatal(err)
			}
			cur, def, ovr := v.Current.M.Clone(), v.Defaults.M, v.Overrides.M
			snapshots := []*attr.Map{cur.Clone(), def.Clone(), ovr.Clone()}
			got := carrier.Compose(cur, def, ovr)
			if !got.Equal(want) {
				t.Errorf("Compose = %v, want %v", got, want)
			}
			for i, in := range []*attr.Map{cur, def, ovr} {
				if !in.Equal(snapshots[i]) {
					t.Errorf("input %d modified: %v, was %v", i, in, snapshots[i])
				}
			}
			if got == cur {
				t.Errorf("Compose returned its current map")
			}
		})
	}
}

func TestVectorsExtend(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "extend") {
		t.Run(v.ID, func(t *testing.T) {
			text, _, err := v.Text()
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := v.ExpectedString()
			if err != nil {
				t.Fatal(err)
			}
			got, dropped := carrier.Extend(text, v.Defaults.M, v.Overrides.M)
			if got != want {
				t.Errorf("Extend(%q) = %q, want %q", text, got, want)
			}
			if !slices.Equal(droppedKeys(dropped), wantDropped(v)) {
				t.Errorf("dropped %v, want %v", droppedKeys(dropped), wantDropped(v))
			}
		})
	}
}

func TestVectorsSet(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "set") {
		t.Run(v.ID, func(t *testing.T) {
			env := environ.Map(maps.Clone(v.Env))
			want, _, _ := v.ExpectedString()
			got, _, err := carrier.Set(env, v.Attributes.M)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("Set returned %q, want %q", got, want)
			}
			if !maps.Equal(map[string]string(env), v.ExpectedEnv) {
				t.Errorf("env = %v, want %v", env, v.ExpectedEnv)
			}
		})
	}
}

var errBody = errors.New("body failed")

func TestVectorsPublish(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "publish") {
		for _, mode := range []string{"error", "panic"} {
			if !v.Raise && mode == "panic" {
				continue
			}
			t.Run(v.ID+"/"+mode, func(t *testing.T) {
				env := environ.Map(maps.Clone(v.Env))
				var trace []*string
				record := func() {
					if s, ok := env.LookupEnv(carrier.EnvVar); ok {
						trace = append(trace, &s)
					} else {
						trace = append(trace, nil)
					}
				}
				var nest func(ctx context.Context, i int) error
				nest = func(ctx context.Context, i int) error {
					if i == len(v.Scopes) {
						if v.Raise {
							if mode == "panic" {
								panic(errBody)
							}
							return errBody
						}
						return nil
					}
					err := carrier.Publish(ctx, env, v.Scopes[i].M, func(ctx context.Context) error {
						record()
						return nest(ctx, i+1)
					})
					record()
					return err
				}
				var err error
				func() {
					defer func() {
						if r := recover(); r != nil {
							err = fmt.Errorf("panic: %w", r.(error))
						}
					}()
					err = nest(context.Background(), 0)
				}()
				if v.Raise != errors.Is(err, errBody) {
					t.Errorf("error = %v, raise = %v", err, v.Raise)
				}
				if mode == "panic" {
					// A panic skips the records taken after each scope returns.
					record()
					trace = trace[:len(v.Scopes)+1]
					if wantLast := v.ExpectedTrace[len(v.ExpectedTrace)-1]; !eqStrPtr(trace[len(trace)-1], wantLast) {
						t.Errorf("after panic: %v, want %v", show(trace[len(trace)-1]), show(wantLast))
					}
				} else if !slices.EqualFunc(trace, v.ExpectedTrace, eqStrPtr) {
					t.Errorf("trace = %v, want %v", showAll(trace), showAll(v.ExpectedTrace))
				}
				if !maps.Equal(map[string]string(env), v.ExpectedEnv) {
					t.Errorf("env = %v, want %v", env, v.ExpectedEnv)
				}
			})
		}
	}
}

func eqStrPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func show(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return fmt.Sprintf("%q", *s)
}
func showAll(ss []*string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = show(s)
	}
	return out
}

func TestVectorsDuplicateKeys(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "duplicate_keys") {
		t.Run(v.ID, func(t *testing.T) {
			text, _, _ := v.Text()
			var want []string
			if err := json.Unmarshal(v.Expected, &want); err != nil {
				t.Fatal(err)
			}
			if got := carrier.DuplicateKeys(text); !slices.Equal(got, want) {
				t.Errorf("DuplicateKeys(%q) = %v, want %v", text, got, want)
			}
		})
	}
}

func TestVectorsCheck(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "check") {
		t.Run(v.ID, func(t *testing.T) {
			var want struct {
				OK                                    bool
				Missing, Empty, Forbidden, Duplicates []string
			}
			if err := json.Unmarshal(v.Expected, &want); err != nil {
				t.Fatal(err)
			}
			envValue := ""
			if v.EnvValue != nil {
				envValue = *v.EnvValue
			}
			got := carrier.Check(v.Attributes.M, v.Required, v.Forbidden, envValue)
			if got.OK() != want.OK || !slices.Equal(got.Missing, want.Missing) || !slices.Equal(got.Empty, want.Empty) ||
				!slices.Equal(got.Forbidden, want.Forbidden) || !slices.Equal(got.Duplicates, want.Duplicates) {
				t.Errorf("Check = %+v (ok %v), want %+v", got, got.OK(), want)
			}
		})
	}
}

package carrier_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
)

// state renders the carrier variable of env: its quoted value or <unset>.
func state(env environ.Lookuper) string {
	if v, ok := env.LookupEnv(carrier.EnvVar); ok {
		return fmt.Sprintf("%q", v)
	}
	return "<unset>"
}

func wantState(t *testing.T, step string, env environ.Lookuper, want string) {
	t.Helper()
	if got := state(env); got != want {
		t.Errorf("%s: carrier = %s, want %s", step, got, want)
	}
}

func rank(n int) *attr.Map { return attr.NewMap(attr.Entry{Key: "nv.dl.rank", Value: attr.Int(n)}) }

// begin is carrier.Begin that fails the test on error and always ends the
// publication at cleanup, so that a failing test never leaves the process
// wide publication guard taken (which would block every other test).
func begin(t *testing.T, ctx context.Context, env environ.Env, m *attr.Map) (context.Context, *carrier.Publication) {
	t.Helper()
	ctx, p, _, err := carrier.Begin(ctx, env, m)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	t.Cleanup(func() { p.End() })
	return ctx, p
}

func TestPublishNestingLIFO(t *testing.T) {
	t.Parallel()
	env := environ.Map{carrier.EnvVar: "nv.dl.rank=0", "OTHER": "x"}
	err := carrier.Publish(context.Background(), env, rank(1), func(ctx context.Context) error {
		wantState(t, "outer", env, `"nv.dl.rank=1"`)
		err := carrier.Publish(ctx, env, rank(2), func(ctx context.Context) error {
			wantState(t, "inner", env, `"nv.dl.rank=2"`)
			return carrier.Publish(ctx, env, nil, func(context.Context) error {
				wantState(t, "innermost", env, `""`)
				return nil
			})
		})
		wantState(t, "after inner", env, `"nv.dl.rank=1"`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, "after outer", env, `"nv.dl.rank=0"`)
	if env["OTHER"] != "x" || len(env) != 2 {
		t.Errorf("other variables touched: %v", env)
	}
}

func TestPublishRestoresAbsentAndEmpty(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		env  environ.Map
		want string
	}{
		"unset": {environ.Map{}, "<unset>"},
		"empty": {environ.Map{carrier.EnvVar: ""}, `""`},
		"value": {environ.Map{carrier.EnvVar: " odd , value="}, `" odd , value="`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, fail := range []bool{false, true} {
				err := carrier.Publish(context.Background(), tt.env, attr.FromStrings("a", "1"), func(context.Context) error {
					wantState(t, "inside", tt.env, `"a=1"`)
					if fail {
						return errBody
					}
					return nil
				})
				if fail != errors.Is(err, errBody) {
					t.Errorf("fail=%v: Publish returned %v", fail, err)
				}
				wantState(t, fmt.Sprint("after, fail=", fail), tt.env, tt.want)
			}
		})
	}
}

func TestPublishPanic(t *testing.T) {
	t.Parallel()
	env := environ.Map{carrier.EnvVar: "orig=1"}
	type boom struct{ n int }
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		carrier.Publish(context.Background(), env, rank(1), func(ctx context.Context) error {
			return carrier.Publish(ctx, env, rank(2), func(context.Context) error {
				panic(boom{7})
			})
		})
	}()
	if recovered != (boom{7}) {
		t.Errorf("recovered %v, want the body's panic value", recovered)
	}
	wantState(t, "after panic", env, `"orig=1"`)
	// The guard was released: a new publication does not wait.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := carrier.Publish(ctx, env, rank(3), func(context.Context) error { return nil }); err != nil {
		t.Errorf("Publish after a panic: %v", err)
	}
}

// The process-environment tests are not parallel: they write the real
// environment (t.Setenv restores it afterwards).

func TestPublishProcessEnvUnset(t *testing.T) {
	t.Setenv(carrier.EnvVar, "")
	os.Unsetenv(carrier.EnvVar)
	err := carrier.Publish(context.Background(), nil, rank(2), func(context.Context) error {
		if got := os.Getenv(carrier.EnvVar); got != "nv.dl.rank=2" {
			t.Errorf("inside: %q", got)
		}
		return errBody
	})
	if !errors.Is(err, errBody) {
		t.Errorf("Publish = %v, want the body error", err)
	}
	if v, ok := os.LookupEnv(carrier.EnvVar); ok {
		t.Errorf("after: variable present (%q), want it deleted again", v)
	}
}

func TestPublishProcessEnvEmpty(t *testing.T) {
	t.Setenv(carrier.EnvVar, "")
	err := carrier.Publish(context.Background(), environ.OS{}, attr.FromStrings("a", "1"), func(context.Context) error {
		if got := os.Getenv(carrier.EnvVar); got != "a=1" {
			t.Errorf("inside: %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := os.LookupEnv(carrier.EnvVar); !ok || v != "" {
		t.Errorf("after: %q, %v; want present and empty", v, ok)
	}
}

func TestBeginEndOutOfOrder(t *testing.T) {
	t.Parallel()
	t.Run("middle first", func(t *testing.T) {
		env := environ.Map{carrier.EnvVar: "orig"}
		ctx1, p1 := begin(t, context.Background(), env, rank(1))
		ctx2, p2 := begin(t, ctx1, env, rank(2))
		ctx3, p3 := begin(t, ctx2, env, rank(3))
		wantState(t, "innermost", env, `"nv.dl.rank=3"`)

		if err := p2.End(); !errors.Is(err, carrier.ErrOutOfOrder) {
			t.Errorf("p2.End() = %v, want ErrOutOfOrder", err)
		}
		// As if p3 then p2 had been ended correctly.
		wantState(t, "after p2.End", env, `"nv.dl.rank=1"`)
		if err := p3.End(); err != nil {
			t.Errorf("p3.End() after its parent = %v, want nil (no-op)", err)
		}
		wantState(t, "after p3.End", env, `"nv.dl.rank=1"`)
		for name, ctx := range map[string]context.Context{"ctx2": ctx2, "ctx3": ctx3} {
			if _, p, _, err := carrier.Begin(ctx, env, rank(9)); !errors.Is(err, carrier.ErrOutOfOrder) || p != nil {
				t.Errorf("Begin under an ended publication (%s) = %v, %v", name, p, err)
			}
		}
		wantState(t, "after refused Begins", env, `"nv.dl.rank=1"`)
		if err := p1.End(); err != nil {
			t.Errorf("p1.End() = %v", err)
		}
		wantState(t, "after p1.End", env, `"orig"`)
		if _, p, _, err := carrier.Begin(ctx1, env, rank(9)); !errors.Is(err, carrier.ErrOutOfOrder) || p != nil {
			t.Errorf("Begin with a stale context = %v, %v", p, err)
		}
		wantState(t, "end", env, `"orig"`)
	})
	t.Run("outer first, two environments", func(t *testing.T) {
		envA := environ.Map{}
		envB := environ.Map{carrier.EnvVar: ""}
		ctx1, p1 := begin(t, context.Background(), envA, rank(1))
		_, p2 := begin(t, ctx1, envB, rank(2))
		if err := p1.End(); !errors.Is(err, carrier.ErrOutOfOrder) {
			t.Errorf("p1.End() = %v, want ErrOutOfOrder", err)
		}
		wantState(t, "envA", envA, "<unset>")
		wantState(t, "envB", envB, `""`)
		if err := p2.End(); err != nil {
			t.Errorf("p2.End() = %v", err)
		}
		// The guard was released by p1.End.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, p3 := begin(t, ctx, envA, rank(3))
		if err := p3.End(); err != nil {
			t.Error(err)
		}
	})
}

func TestEndTwice(t *testing.T) {
	t.Parallel()
	env := environ.Map{carrier.EnvVar: "orig"}
	_, p := begin(t, context.Background(), env, rank(1))
	if err := p.End(); err != nil {
		t.Fatal(err)
	}
	env[carrier.EnvVar] = "changed later"
	if err := p.End(); err != nil {
		t.Errorf("second End = %v", err)
	}
	wantState(t, "after second End", env, `"changed later"`)

	var nilPub *carrier.Publication
	if err := nilPub.End(); err != nil {
		t.Errorf("nil End = %v", err)
	}
	if err := new(carrier.Publication).End(); !errors.Is(err, carrier.ErrOutOfOrder) {
		t.Errorf("End of a publication Begin never returned = %v, want ErrOutOfOrder", err)
	}
}

func TestBeginWaitsForAnotherGoroutine(t *testing.T) {
	t.Parallel()
	envA := environ.Map{}
	_, p := begin(t, context.Background(), envA, rank(1))

	envB := environ.Map{carrier.EnvVar: "b"}
	// A deadline while waiting.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, q, _, err := carrier.Begin(ctx, envB, rank(2)); !errors.Is(err, context.DeadlineExceeded) || q != nil {
		t.Errorf("Begin past its deadline = %v, %v", q, err)
	}
	// A cancellation while waiting, from another goroutine.
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, _, _, err := carrier.Begin(ctx, envB, rank(2))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Begin cancelled while waiting = %v", err)
	}
	wantState(t, "envB after refused Begins", envB, `"b"`)

	// A waiting Begin proceeds once the holder ends its publication.
	var ended atomic.Bool
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		err := carrier.Publish(ctx, envB, rank(3), func(context.Context) error {
			if !ended.Load() {
				return errors.New("published while another goroutine's publication was active")
			}
			return nil
		})
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	ended.Store(true)
	if err := p.End(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
	wantState(t, "envB at the end", envB, `"b"`)
}

// TestBeginDoneContext: an outermost Begin with a context that is already
// done fails, even when nothing else is published (and never races between
// the two outcomes). A nested Begin never waits, so its context's state
// does not matter.
//
// Not parallel, and the guard is taken and released before every attempt:
// the regression it guards against (a select that picks the free guard or
// the done context at random) shows only while the guard is free, which a
// parallel publishing test would make a matter of luck. With the guard free,
// each of the 200 attempts catches it with probability 1/2.
func TestBeginDoneContext(t *testing.T) {
	env := environ.Map{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 200 {
		_, free, _, err := carrier.Begin(context.Background(), env, rank(0))
		if err != nil {
			t.Fatalf("Begin: %v", err)
		}
		if err := free.End(); err != nil {
			t.Fatal(err)
		}
		if _, p, _, err := carrier.Begin(ctx, env, rank(1)); !errors.Is(err, context.Canceled) || p != nil {
			p.End() // never leave the guard taken
			t.Fatalf("Begin with a cancelled context and a free guard = %v, %v", p, err)
		}
	}
	wantState(t, "after", env, "<unset>")

	outer, p := begin(t, context.Background(), env, rank(1))
	nested, cancelNested := context.WithCancel(outer)
	cancelNested()
	_, q, _, err := carrier.Begin(nested, env, rank(2))
	if err != nil {
		t.Fatalf("nested Begin with a cancelled context: %v", err)
	}
	if err := errors.Join(q.End(), p.End()); err != nil {
		t.Fatal(err)
	}
}

// TestBeginNestedWithoutContext documents the rule that nested publications
// must use the enclosing context: with an unrelated context an inner Begin
// waits for the outer one, i.e. until its own context is done.
func TestBeginNestedWithoutContext(t *testing.T) {
	t.Parallel()
	env := environ.Map{}
	err := carrier.Publish(context.Background(), env, rank(1), func(context.Context) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, _, _, err := carrier.Begin(ctx, env, rank(2))
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Publish = %v, want the inner Begin's deadline error", err)
	}
	wantState(t, "after", env, "<unset>")
}

// failEnv is a MapEnv whose writes can fail.
type failEnv struct {
	environ.Map
	failSet, failUnset bool
}

var errEnv = errors.New("env write failed")

func (e failEnv) Setenv(k, v string) error {
	if e.failSet {
		return errEnv
	}
	return e.Map.Setenv(k, v)
}

func (e failEnv) Unsetenv(k string) error {
	if e.failUnset {
		return errEnv
	}
	return e.Map.Unsetenv(k)
}

func TestPublishEnvErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Set fails: nothing is published, the body does not run, the guard is
	// released.
	ran := false
	err := carrier.Publish(ctx, failEnv{Map: environ.Map{}, failSet: true}, rank(1), func(context.Context) error {
		ran = true
		return nil
	})
	if !errors.Is(err, errEnv) || ran {
		t.Errorf("Publish with a failing Setenv = %v (body ran: %v)", err, ran)
	}

	// The restore fails: joined with the body's error.
	env := failEnv{Map: environ.Map{}, failUnset: true}
	err = carrier.Publish(ctx, env, rank(1), func(context.Context) error { return errBody })
	if !errors.Is(err, errBody) || !errors.Is(err, errEnv) {
		t.Errorf("Publish with a failing restore = %v, want both errors", err)
	}

	// Begin reports dropped entries.
	_, p, dropped, err := carrier.Begin(ctx, environ.Map{}, attr.FromStrings("a,b", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.End(); err != nil {
		t.Error(err)
	}
	if len(dropped) != 1 || !errors.Is(dropped[0].Err, carrier.ErrKeyNotCarried) {
		t.Errorf("Begin dropped = %v", dropped)
	}
}

// TestPublishConcurrentProcessEnv publishes on the real process environment
// from many goroutines at once; every body must see its own carrier. Run it
// with -race. Not parallel: it writes the process environment.
func TestPublishConcurrentProcessEnv(t *testing.T) {
	t.Setenv(carrier.EnvVar, "orig=1")
	const goroutines, iterations = 64, 50
	var (
		wg     sync.WaitGroup
		bodies atomic.Int64
	)
	for g := range goroutines {
		wg.Go(func() {
			for i := range iterations {
				m := attr.NewMap(attr.Entry{Key: "g", Value: attr.Int(g)}, attr.Entry{Key: "i", Value: attr.Int(i)})
				want := fmt.Sprintf("g=%d,i=%d", g, i)
				err := carrier.Publish(context.Background(), environ.OS{}, m, func(ctx context.Context) error {
					bodies.Add(1)
					if got := os.Getenv(carrier.EnvVar); got != want {
						return fmt.Errorf("body sees %q, want %q", got, want)
					}
					if i%10 != 0 {
						return nil
					}
					err := carrier.Publish(ctx, environ.OS{}, attr.FromStrings("inner", want), func(context.Context) error {
						if got := os.Getenv(carrier.EnvVar); got != "inner="+carrier.Encode(want) {
							return fmt.Errorf("nested body sees %q", got)
						}
						return nil
					})
					if got := os.Getenv(carrier.EnvVar); err == nil && got != want {
						err = fmt.Errorf("after the nested publication: %q, want %q", got, want)
					}
					return err
				})
				if err != nil {
					t.Errorf("goroutine %d iteration %d: %v", g, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := bodies.Load(); n != goroutines*iterations {
		t.Errorf("%d bodies ran, want %d", n, goroutines*iterations)
	}
	if got := os.Getenv(carrier.EnvVar); got != "orig=1" {
		t.Errorf("process carrier at the end = %q, want the original", got)
	}
}

package carrier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/process"
	"github.com/nemolens/lens-go/internal/pytext"
)

// Set formats attrs and stores the text in env's carrier variable (nil: the
// process environment), even when the text is empty: the variable then
// exists with the value "" (docs/compatibility.md#composition). It replaces the old value and never
// merges with it; callers that want to keep current values compose first
// ([Compose], [Extend]). It returns the stored text and the dropped entries.
func Set(env environ.Env, attrs *attr.Map) (string, []Dropped, error) {
	text, dropped := Format(attrs)
	if err := environ.OrEnv(env).Setenv(EnvVar, text); err != nil {
		return "", dropped, fmt.Errorf("carrier: set %s: %w", EnvVar, err)
	}
	return text, dropped, nil
}

// ErrOutOfOrder is returned by [Publication.End] when publications are not
// ended in last-in, first-out order.
var ErrOutOfOrder = errors.New("carrier: publication ended out of order")

// publications is the one guarded piece of global state in lens-go: the
// process environment is shared by all goroutines, so publications are
// serialised by a one-slot semaphore (outermost publications take it, nested
// ones inherit it through their context) and tracked on a stack for LIFO
// restores. mu guards stack.
var publications = struct {
	sem   chan struct{}
	mu    sync.Mutex
	stack []*Publication
}{sem: make(chan struct{}, 1)}

type pubKey struct{}

// Publication is an active carrier publication made by [Begin]. End it with
// [Publication.End] to restore the variable.
type Publication struct {
	env  environ.Env
	prev string
	had  bool // the variable existed before
	// runID is set when the publication also set NEMO_LENS_RUN_ID (which
	// was absent, or present with prevRunID, when hadRunID).
	runID     bool
	prevRunID string
	hadRunID  bool
	// drawn is set when it also set NEMO_LENS_RUN_ID_DRAWN (which was
	// absent, or present with prevDrawn, when hadDrawn).
	drawn     bool
	prevDrawn string
	hadDrawn  bool
	outer     bool // holds the semaphore
	ended     bool
	parent    *Publication
}

// Begin publishes attrs as env's carrier (nil env: the process environment)
// until the returned Publication is ended. It remembers whether the variable
// existed and its exact value, then calls [Set].
//
// Publications are serialised across goroutines: an outermost Begin waits
// (until ctx is done) while another goroutine's publication is active, and
// fails at once, publishing nothing, if ctx is already done. A
// nested publication must be begun with the context returned by the
// enclosing Begin; it then does not wait, and it must be ended before its
// parent.
//
// Begin installs only the given map; to keep the current values, compose
// first (Extend(Get(env)...)). When env holds no non-empty NEMO_LENS_RUN_ID
// (or a random one a launcher's id outranks), Begin also sets it, and
// NEMO_LENS_RUN_ID_DRAWN when it is random, to this process's run id (see
// [ChildEnv]) for the
// duration of the publication, so that the children started meanwhile join
// this process's run; End restores it too.
func Begin(ctx context.Context, env environ.Env, attrs *attr.Map) (context.Context, *Publication, []Dropped, error) {
	env = environ.OrEnv(env)
	parent, _ := ctx.Value(pubKey{}).(*Publication)
	if parent != nil {
		publications.mu.Lock()
		top := len(publications.stack) > 0 && publications.stack[len(publications.stack)-1] == parent
		publications.mu.Unlock()
		if !top {
			return ctx, nil, nil, fmt.Errorf("%w: the enclosing publication is no longer the innermost active one", ErrOutOfOrder)
		}
	} else {
		// A context that is already done fails even when the guard is
		// free; without this check select would pick either case at random.
		if err := ctx.Err(); err != nil {
			return ctx, nil, nil, fmt.Errorf("carrier: waiting to publish: %w", err)
		}
		select {
		case publications.sem <- struct{}{}:
		case <-ctx.Done():
			return ctx, nil, nil, fmt.Errorf("carrier: waiting to publish: %w", ctx.Err())
		}
	}
	p := &Publication{env: env, outer: parent == nil, parent: parent}
	p.prev, p.had = env.LookupEnv(EnvVar)
	_, dropped, err := Set(env, attrs)
	if err == nil {
		err = p.setRunID()
	}
	if err != nil {
		err = errors.Join(err, p.restore())
		if p.outer {
			<-publications.sem
		}
		return ctx, nil, dropped, err
	}
	publications.mu.Lock()
	publications.stack = append(publications.stack, p)
	publications.mu.Unlock()
	return context.WithValue(ctx, pubKey{}, p), p, dropped, nil
}

// End restores the carrier variable to what it was before the publication:
// the exact previous text (even ""), or no variable at all if there was none.
// Calling End again is a no-op.
//
// If publications nested inside this one are still active, End restores them
// first, innermost first, so the environment is never left in a state that
// no sequence of correct restores would produce, and reports [ErrOutOfOrder].
// A later End of such an inner publication does nothing and returns nil.
func (p *Publication) End() error {
	publications.mu.Lock()
	defer publications.mu.Unlock()
	if p == nil || p.ended {
		return nil
	}
	i := slices.Index(publications.stack, p)
	if i < 0 {
		return fmt.Errorf("%w: unknown publication", ErrOutOfOrder)
	}
	var errs []error
	if i != len(publications.stack)-1 {
		errs = append(errs, fmt.Errorf("%w: %d nested publication(s) still active were restored first", ErrOutOfOrder, len(publications.stack)-1-i))
	}
	for j := len(publications.stack) - 1; j >= i; j-- {
		q := publications.stack[j]
		errs = append(errs, q.restore())
		q.ended = true
		if q.outer {
			<-publications.sem
		}
	}
	publications.stack = publications.stack[:i]
	return errors.Join(errs...)
}

// setRunID sets NEMO_LENS_RUN_ID when env has no non-empty one, or one
// drawn at random that a launcher's id outranks, and marks a random one
// with NEMO_LENS_RUN_ID_DRAWN (docs/resource.md#run-id-launcher).
func (p *Publication) setRunID() error {
	v, ok := p.env.LookupEnv(process.RunIDEnv)
	if process.Configured(p.env, pytext.TrimSpace(v), pytext.TrimSpace) != "" {
		return nil
	}
	id := process.RunID(p.env, pytext.TrimSpace)
	drawn := process.Drawn(p.env, id, pytext.TrimSpace)
	p.runID, p.prevRunID, p.hadRunID = true, v, ok
	if err := p.env.Setenv(process.RunIDEnv, id); err != nil {
		return fmt.Errorf("carrier: set %s: %w", process.RunIDEnv, err)
	}
	if drawn {
		d, had := p.env.LookupEnv(process.DrawnRunIDEnv)
		p.drawn, p.prevDrawn, p.hadDrawn = true, d, had
		if err := p.env.Setenv(process.DrawnRunIDEnv, id); err != nil {
			return fmt.Errorf("carrier: set %s: %w", process.DrawnRunIDEnv, err)
		}
	}
	return nil
}

func (p *Publication) restore() error {
	errs := []error{restoreVar(p.env, EnvVar, p.prev, p.had)}
	if p.runID {
		errs = append(errs, restoreVar(p.env, process.RunIDEnv, p.prevRunID, p.hadRunID))
	}
	if p.drawn {
		errs = append(errs, restoreVar(p.env, process.DrawnRunIDEnv, p.prevDrawn, p.hadDrawn))
	}
	return errors.Join(errs...)
}

// restoreVar writes back the exact previous value of name, or deletes it.
func restoreVar(env environ.Env, name, prev string, had bool) error {
	var err error
	if had {
		err = env.Setenv(name, prev)
	} else {
		err = env.Unsetenv(name)
	}
	if err != nil {
		return fmt.Errorf("carrier: restore %s: %w", name, err)
	}
	return nil
}

// Publish runs body with attrs published as env's carrier (nil env: the
// process environment) and restores the variable afterwards, when body
// returns, fails or panics (the panic propagates after the restore). body
// receives the context to use for nested publications. Body errors are
// returned; a restore failure is joined to them.
//
// Publish is for code that starts children it does not control (a library
// that calls exec itself, a Python interpreter embedded via cgo). Go programs
// that start their own children should pass [ChildEnv] to exec.Cmd.Env
// instead, which never touches the process environment.
func Publish(ctx context.Context, env environ.Env, attrs *attr.Map, body func(ctx context.Context) error) (err error) {
	ctx, p, _, err := Begin(ctx, env, attrs)
	if err != nil {
		return err
	}
	defer func() {
		if endErr := p.End(); endErr != nil {
			err = errors.Join(err, endErr)
		}
	}()
	return body(ctx)
}

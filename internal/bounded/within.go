package bounded

import "context"

// Within runs f in a goroutine of its own and returns what it returns, or
// ctx's error as soon as ctx ends first; f then goes on alone and its
// result is dropped. It bounds the caller, not f: a read asleep in a hung
// driver stays asleep, and one that sleeps uninterruptibly also keeps the
// process from exiting until it returns, which is why lens runs its driver
// reads in a [Child] (docs/exec.md#what-runs-where).
func Within[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		select {
		case r := <-done: // f finished too: its result wins
			return r.v, r.err
		default:
		}
		var zero T
		return zero, ctx.Err()
	}
}

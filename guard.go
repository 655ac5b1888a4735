package lens

import (
	"errors"
	"fmt"
	"sync"
)

// ErrAlreadySetUp is returned by an enabled [Setup] while the Handle of an
// earlier enabled Setup has not been shut down (docs/resource.md#setup-once), unless
// [WithAllowReinit] is given.
var ErrAlreadySetUp = errors.New("lens: telemetry is already set up in this process")

// setups is the one-enabled-setup-per-process guard (docs/resource.md#setup-once): the number
// of enabled Handles not yet shut down. Like the global providers it
// guards, it is process-wide by nature.
var setups struct {
	mu     sync.Mutex
	active int
}

func acquire(allowReinit bool) error {
	setups.mu.Lock()
	defer setups.mu.Unlock()
	if setups.active > 0 && !allowReinit {
		return fmt.Errorf("%w (shut the earlier Handle down first, or pass WithAllowReinit)", ErrAlreadySetUp)
	}
	setups.active++
	return nil
}

func release() {
	setups.mu.Lock()
	defer setups.mu.Unlock()
	if setups.active > 0 {
		setups.active--
	}
}

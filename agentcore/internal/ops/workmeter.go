package ops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentura/agentura/internal/lib/quota"
)

// A call's work folder counts against its owner's quota while the tool
// writes it (escape E18): a tool that writes far more than the owner may
// keep (an archive of a hundred copies of an input) is stopped when its
// folder passes what the owner has left, not once the whole output lies on
// disk. The meter measures the folder every workMeterInterval and holds
// that many bytes as a reservation of the quota, so uploads and other calls
// of the owner see them at once; a reservation that does not fit cancels
// the call's context with a *workQuotaError. The reservation is dropped
// when FileResponse starts storing outputs (the files it adopts then count
// as files) and when the call ends.

// WorkMeterInterval is how often a running call's work folder is measured.
const WorkMeterInterval = 100 * time.Millisecond

// WorkMeter meters one call's work folder.
type WorkMeter struct {
	quota *quota.Store
	owner string
	key   string // the reservation's key
	dir   string // the work folder

	once sync.Once
	stop chan struct{}
	done chan struct{}
}

// MeterWork starts metering the work folder dir of a call of owner against
// q, its reservation named by key, cancelling with a *WorkQuotaError on
// overflow. It returns nil when q is nil (no quota).
func MeterWork(ctx context.Context, q *quota.Store, owner, key, dir string, cancel context.CancelCauseFunc) *WorkMeter {
	if q == nil {
		return nil
	}
	m := &WorkMeter{
		quota: q, owner: owner, key: key, dir: dir,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	go m.run(ctx, cancel)
	return m
}

func (m *WorkMeter) run(ctx context.Context, cancel context.CancelCauseFunc) {
	defer close(m.done)
	t := time.NewTicker(WorkMeterInterval)
	defer t.Stop()
	var held int64
	for {
		select {
		case <-m.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n := folderBytes(m.dir)
		if n == held {
			continue
		}
		err := m.quota.Reserve(ctx, m.owner, m.key, n)
		if qe, ok := errors.AsType[*quota.Error](err); ok {
			cancel(&WorkQuotaError{written: n, qe: qe})
			return
		}
		if err == nil {
			held = n
		}
	}
}

// End stops the meter and drops its reservation; a nil meter does nothing.
func (m *WorkMeter) End() {
	if m == nil {
		return
	}
	m.once.Do(func() {
		close(m.stop)
		<-m.done
		m.quota.Release(m.owner, m.key)
	})
}

// folderBytes is the size of the regular files below dir (0 when it does
// not exist).
func folderBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n
}

// WorkQuotaError is the cause of a call stopped because its work folder
// passed what its owner may still store.
type WorkQuotaError struct {
	written int64
	qe      *quota.Error
}

// Error says how much the call wrote and what its owner may store.
func (e *WorkQuotaError) Error() string {
	return fmt.Sprintf("the call was stopped: it had written %s in its work folder, more than owner %q may still store (%s of its %s quota in use, %s); "+
		"ask for a smaller result, or delete files first",
		quota.FormatBytes(e.written), e.qe.Owner, quota.FormatBytes(e.qe.Used), quota.FormatBytes(e.qe.Limit), e.qe.Setting)
}

// Unwrap makes errors.Is(err, quota.ErrExceeded) hold.
func (e *WorkQuotaError) Unwrap() error { return e.qe }

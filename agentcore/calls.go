//go:build unix

package agentcore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentura/agentura/fileserve"
)

// callFolders is this process's share of <store>/calls: a folder of its own,
// named by a random instance id, and beside it a lock file held for the
// life of the process. Several processes may share one store (replicas on
// one volume, a restart overlapping its predecessor): each removes only the
// folders whose lock nobody holds, which a crash left behind.
type callFolders struct {
	dir      string   // <store>/calls/<instance>
	instance string   // the random instance id
	lock     *os.File // <store>/calls/<instance>.lock, flock'ed exclusively
	store    fileserve.Store
}

// openCallFolders takes this process's share of parent after removing the
// folders of processes that are gone; the outputs their unfinished calls
// had added are deleted from st first (rollbackJournals).
func openCallFolders(parent string, st fileserve.Store) (*callFolders, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("create call folders: %w", err)
	}
	unlock, err := lockCallFolders(parent)
	if err != nil {
		return nil, err
	}
	defer unlock()
	removeAbandonedCallFolders(parent, st)
	instance := fileserve.NewID()
	lock, err := os.OpenFile(filepath.Join(parent, instance+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create call folder lock: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("lock call folder: %w", err)
	}
	dir := filepath.Join(parent, instance)
	if err := os.Mkdir(dir, 0o700); err != nil {
		lock.Close()
		return nil, fmt.Errorf("create call folder: %w", err)
	}
	return &callFolders{dir: dir, instance: instance, lock: lock, store: st}, nil
}

// lockCallFolders takes the lock of the folder parent. Processes starting
// at once take turns: between creating its lock file and locking it, a
// process's folder would look abandoned to another's sweep. The lock on the
// parent folder makes the two steps one.
func lockCallFolders(parent string) (unlock func(), err error) {
	guard, err := os.Open(parent)
	if err != nil {
		return nil, fmt.Errorf("open call folders: %w", err)
	}
	if err := syscall.Flock(int(guard.Fd()), syscall.LOCK_EX); err != nil {
		guard.Close()
		return nil, fmt.Errorf("lock call folders: %w", err)
	}
	return func() {
		syscall.Flock(int(guard.Fd()), syscall.LOCK_UN)
		guard.Close()
	}, nil
}

// sweep removes the folders of processes that have stopped since this one
// started (replicas sharing the volume), rolling back their unfinished
// calls' outputs; the sweeper calls it on its schedule.
func (c *callFolders) sweep() {
	parent := filepath.Dir(c.dir)
	unlock, err := lockCallFolders(parent)
	if err != nil {
		return
	}
	defer unlock()
	removeAbandonedCallFolders(parent, c.store)
}

// removeAbandonedCallFolders removes the folders of processes that are gone:
// those whose lock file can be locked, or that have no lock file at all.
// The outputs listed in their journals are deleted from st first.
func removeAbandonedCallFolders(parent string, st fileserve.Store) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() {
			continue
		}
		lockPath := filepath.Join(parent, name+".lock")
		lock, err := os.OpenFile(lockPath, os.O_RDWR, 0)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if lock != nil {
			if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
				lock.Close() // held: a live process's folder
				continue
			}
		}
		rollbackJournals(st, filepath.Join(parent, name))
		os.RemoveAll(filepath.Join(parent, name))
		if lock != nil {
			os.Remove(lockPath)
			lock.Close()
		}
	}
	// Lock files whose folder is gone.
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".lock"); ok && !e.IsDir() {
			if _, err := os.Stat(filepath.Join(parent, name)); errors.Is(err, os.ErrNotExist) {
				if lock, err := os.OpenFile(filepath.Join(parent, e.Name()), os.O_RDWR, 0); err == nil {
					if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
						os.Remove(lock.Name())
					}
					lock.Close()
				}
			}
		}
	}
}

// gone reports whether the process of instance id is gone: its lock file
// is missing or nobody holds it. A process holds its lock before it writes
// anything tagged with its id, so the answer for a tag found on disk is
// final once it is true.
func (c *callFolders) gone(instance string) bool {
	if !fileserve.ValidID(instance) {
		return false
	}
	lock, err := os.OpenFile(filepath.Join(filepath.Dir(c.dir), instance+".lock"), os.O_RDWR, 0)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer lock.Close()
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // held: alive
	}
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	return true
}

// close removes this process's folder and releases its lock. The outputs
// of calls still unfinished (a shutdown that timed out) are deleted first,
// as after a crash.
func (c *callFolders) close() {
	rollbackJournals(c.store, c.dir)
	os.RemoveAll(c.dir)
	os.Remove(c.lock.Name())
	c.lock.Close()
}

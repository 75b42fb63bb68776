//go:build unix

// Package callfiles holds the per-call work folders of an agent process
// and the commit of a call's outputs: the folders live under the store's
// root (or the data folder), each process's under a lock of its own, and
// one journal per response lists its outputs until they are all stored, so
// that a crash in between leaves none of them once any replica notices.
package callfiles

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/agentura/agentura/fileserve"
)

// Folders are this process's share of <store>/calls: a folder of its own,
// named by a random instance id, and beside it a lock file held for the
// life of the process. Several processes may share one store (replicas on
// one volume, a restart overlapping its predecessor): each removes only the
// folders whose lock nobody holds, which a crash left behind.
type Folders struct {
	parent   string   // <store>/calls
	dir      string   // <store>/calls/<instance>
	instance string   // the random instance id
	lock     *os.File // <store>/calls/<instance>.lock, flock'ed exclusively
	// store deletes the outputs of journals rolled back (the store the
	// quota counts); nil: none are.
	store fileserve.Store
	// records keeps the output journals (outputJournal) where every
	// replica sees them; nil: journals are files in the call folders.
	records fileserve.RecordStore
	// deleted, when not nil, tells the other replicas of an output rolled
	// back (their quotas forget it).
	deleted func(ctx context.Context, id string)
	live    sync.Map // names of this process's journal records in progress

	temp tempOwners   // the store's temporary files, once tagged (TagTemp)
	log  *slog.Logger // of the temporary files removed
}

// Open takes this process's share of parent after removing the
// folders of processes that are gone; the outputs their unfinished calls
// had added are deleted from st first (their journals, in rs when not nil,
// else in their folders), and deleted told of each.
func Open(parent string, st fileserve.Store, rs fileserve.RecordStore, deleted func(context.Context, string)) (*Folders, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("create call folders: %w", err)
	}
	unlock, err := lockCallFolders(parent)
	if err != nil {
		return nil, err
	}
	defer unlock()
	c := &Folders{parent: parent, store: st, records: rs, deleted: deleted, instance: fileserve.NewID()}
	c.removeAbandoned()
	lock, err := os.OpenFile(filepath.Join(parent, c.instance+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create call folder lock: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("lock call folder: %w", err)
	}
	c.dir, c.lock = filepath.Join(parent, c.instance), lock
	if err := os.Mkdir(c.dir, 0o700); err != nil {
		lock.Close()
		return nil, fmt.Errorf("create call folder: %w", err)
	}
	return c, nil
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

// Sweep removes the folders of processes that have stopped since this one
// started (replicas sharing the volume), rolling back their unfinished
// calls' outputs, and rolls back the journals of processes gone elsewhere
// (replicas on other volumes, whose journals lapsed); the sweeper calls it
// on its schedule.
func (c *Folders) Sweep() {
	unlock, err := lockCallFolders(c.parent)
	if err != nil {
		return
	}
	defer unlock()
	c.removeAbandoned()
}

// removeAbandoned removes the folders of processes that are gone: those
// whose lock file can be locked, or that have no lock file at all. The
// outputs listed in their journals are deleted first; then the journal
// records of every process gone (reapJournals).
func (c *Folders) removeAbandoned() {
	parent := c.parent
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	dead := map[string]bool{}
	var locks []*os.File
	defer func() {
		for _, l := range locks {
			os.Remove(l.Name())
			l.Close()
		}
	}()
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
		c.rollbackJournals(filepath.Join(parent, name))
		os.RemoveAll(filepath.Join(parent, name))
		dead[name] = true
		if lock != nil {
			locks = append(locks, lock) // removed once the records are reaped
		}
	}
	c.reapJournals(dead)
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

// Gone reports whether the process of instance id is gone: its lock file
// is missing or nobody holds it. A process holds its lock before it writes
// anything tagged with its id, so the answer for a tag found on disk is
// final once it is true.
func (c *Folders) Gone(instance string) bool {
	st := c.lockHeld(instance)
	return st == lockFree || st == lockMissing
}

// lockState is what the lock file of a process tells of it.
type lockState int

const (
	lockUnknown lockState = iota // not a process id, or the file cannot be read
	lockMissing                  // no lock file here: gone, or on another volume
	lockHeld                     // held: the process is alive
	lockFree                     // there and free: the process is gone
)

// lockHeld reads the lock file of the process of instance id.
func (c *Folders) lockHeld(instance string) lockState {
	if !fileserve.ValidID(instance) {
		return lockUnknown
	}
	lock, err := os.OpenFile(filepath.Join(c.parent, instance+".lock"), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return lockMissing
	}
	if err != nil {
		return lockUnknown
	}
	defer lock.Close()
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return lockHeld
	}
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	return lockFree
}

// Close removes this process's folder and releases its lock. The outputs
// of calls still unfinished (a shutdown that timed out) are deleted first,
// as after a crash.
func (c *Folders) Close() {
	c.rollbackJournals(c.dir)
	c.reapJournals(map[string]bool{c.instance: true})
	os.RemoveAll(c.dir)
	os.Remove(c.lock.Name())
	c.lock.Close()
}

// Dir is this process's folder: each call's folder is a new one in it.
func (c *Folders) Dir() string { return c.dir }

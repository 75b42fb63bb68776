package callfiles

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// JournalFile is the name, in a call's folder, of the journal of the
// outputs its FileResponse has added so far, on a store without records.
const JournalFile = "outputs.pending"

// Journals kept in the store's records (fileserve.RecordStore), where
// every replica sharing the store sees them: kind PendingKind, all under
// JournalOwner (one listing reads them all), named <instance>.<journal id>.
const (
	PendingKind  = "pending-outputs"
	JournalOwner = "*"
	// journalRenew is how often a journal in progress is written again,
	// to show its process is alive.
	journalRenew = 10 * time.Second
	// JournalLease is how long a journal stays untouched before another
	// replica takes its process for dead and rolls it back. Replicas'
	// clocks must agree well within JournalLease - journalRenew.
	JournalLease = 30 * time.Second
)

// Journal makes the outputs of one response (FileResponse) one commit. Before
// each output becomes visible in the store (fileserve.NewFile.Pending), its
// area, owner and id are written to a journal; once every output is stored
// the journal is removed (the commit), and only then are the download URLs
// handed out. A process that crashes in between leaves the journal, and
// whoever finds it abandoned deletes every file it lists: after a crash
// none of the call's outputs stays stored, on disk and on S3 alike.
//
// When the call folders lie in the store (a DiskStore: they are under its
// root) the journal is a file in the call's folder, synced, rolled back by
// the next process on that volume (callFolders.removeAbandoned). Otherwise
// (S3) it is a record of the store (fileserve.RecordStore), rewritten every
// journalRenew while the response runs: a replica that comes back on a
// fresh volume, or any other replica, finds it and rolls it back once its
// process is gone (its lock in the call folders free, or the journal
// untouched for JournalLease).
type Journal struct {
	calls   *Folders
	path    string // the local journal file
	f       *os.File
	name    string // the record's name, once written
	entries []journalEntry

	mu      sync.Mutex    // orders the record's writes: record and renew
	renew   chan struct{} // closed to stop renewing
	renewed chan struct{} // closed once renewing stopped
}

// journalEntry is a line of the journal.
type journalEntry struct {
	Area  fileserve.Area `json:"area"`
	Owner string         `json:"owner"`
	ID    string         `json:"id"`
}

// journalRecord is the content of a journal kept as a record.
type journalRecord struct {
	Instance string         `json:"instance"`
	Entries  []journalEntry `json:"entries"`
}

// NewJournal is the journal of a response of the call whose folder is
// callDir.
func (c *Folders) NewJournal(callDir string) *Journal {
	return &Journal{calls: c, path: filepath.Join(callDir, JournalFile)}
}

// Record writes m into the journal; it is the Pending hook of every
// output, so a file is journaled before anyone can see it.
func (j *Journal) Record(m fileserve.Meta) error {
	e := journalEntry{Area: m.Area, Owner: m.Owner, ID: m.ID}
	if slices.Contains(j.entries, e) {
		return nil
	}
	j.entries = append(j.entries, e)
	var err error
	if j.calls.records != nil {
		err = j.writeRecord()
	} else {
		err = j.appendFile(e)
	}
	if err != nil {
		j.entries = j.entries[:len(j.entries)-1]
	}
	return err
}

// writeRecord writes the journal's record whole, and starts renewing it
// after the first write.
func (j *Journal) writeRecord() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.name == "" {
		j.name = j.calls.instance + "." + fileserve.NewID()
		j.calls.live.Store(j.name, true)
	}
	if err := j.put(); err != nil {
		return err
	}
	if j.renew == nil {
		j.renew, j.renewed = make(chan struct{}), make(chan struct{})
		go j.renewing()
	}
	return nil
}

// put writes the record. j.mu is held.
func (j *Journal) put() error {
	b, err := json.Marshal(journalRecord{Instance: j.calls.instance, Entries: j.entries})
	if err != nil {
		return err
	}
	if err := j.calls.records.PutRecord(context.Background(), PendingKind, JournalOwner, j.name, b); err != nil {
		return fmt.Errorf("write the output journal: %w", err)
	}
	return nil
}

// renewing writes the record again every journalRenew until stopped.
func (j *Journal) renewing() {
	defer close(j.renewed)
	t := time.NewTicker(journalRenew)
	defer t.Stop()
	for {
		select {
		case <-j.renew:
			return
		case <-t.C:
			j.mu.Lock()
			j.put() // a failure shows at the next write or the commit
			j.mu.Unlock()
		}
	}
}

// appendFile appends e to the local journal file and syncs it.
func (j *Journal) appendFile(e journalEntry) error {
	if j.f == nil {
		if err := os.MkdirAll(filepath.Dir(j.path), 0o700); err != nil {
			return fmt.Errorf("create the call folder: %w", err)
		}
		f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("open the output journal: %w", err)
		}
		j.f = f
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("write the output journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync the output journal: %w", err)
	}
	return nil
}

// Rollback deletes every output recorded so far: a failed response keeps
// none, including one whose store failed after making it visible.
func (j *Journal) Rollback(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	for _, e := range j.entries {
		j.calls.remove(ctx, e)
	}
}

// Commit ends the journal of a response whose outputs are all stored: it
// is removed, and from then on the outputs are kept. An error means the
// journal may remain, and its outputs be rolled back later: the caller
// rolls them back now and fails.
func (j *Journal) Commit() error {
	if j.renew != nil {
		close(j.renew)
		<-j.renewed
		j.renew = nil
	}
	if j.f != nil {
		j.f.Close()
		j.f = nil
		if err := os.Remove(j.path); err != nil {
			return fmt.Errorf("remove the output journal: %w", err)
		}
	}
	if j.name != "" {
		if err := j.calls.records.DeleteRecord(context.Background(), PendingKind, JournalOwner, j.name); err != nil {
			return fmt.Errorf("remove the output journal: %w", err)
		}
		j.calls.live.Delete(j.name)
		j.name = ""
	}
	return nil
}

// Done ends the journal of a response that committed or rolled back. A
// journal record it fails to remove is no longer live: the next sweep
// rolls it back (its outputs are deleted already).
func (j *Journal) Done() {
	if j.Commit() != nil {
		j.calls.live.Delete(j.name) // the name Commit failed to remove
	}
}

// rollbackJournals deletes every file listed in the journal files of the
// call folders under instanceDir, the folder of a process that is gone:
// the outputs of calls it did not finish.
func (c *Folders) rollbackJournals(instanceDir string) {
	if c.store == nil {
		return
	}
	journals, _ := filepath.Glob(filepath.Join(instanceDir, "*", JournalFile))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, path := range journals {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var e journalEntry
			// A torn last line is a file that never became visible.
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				c.remove(ctx, e)
			}
		}
		f.Close()
	}
}

// reapJournals rolls back the journal records of processes that are gone:
// those of the instances in dead, those whose process's lock on the shared
// call folders is free, those untouched for JournalLease, and this
// process's own that no response holds any more (a commit that failed to
// remove its record).
func (c *Folders) reapJournals(dead map[string]bool) {
	if c.records == nil || c.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	infos, err := c.records.Records(ctx, PendingKind, JournalOwner)
	if err != nil {
		return // the next sweep tries again
	}
	for _, in := range infos {
		instance, _, _ := strings.Cut(in.Name, ".")
		switch {
		case dead[instance]:
		case instance == c.instance:
			if _, live := c.live.Load(in.Name); live {
				continue
			}
		case c.lockHeld(instance) == lockFree:
		case time.Since(in.Changed) < JournalLease:
			continue
		}
		b, err := c.records.GetRecord(ctx, PendingKind, JournalOwner, in.Name)
		if errors.Is(err, fileserve.ErrNotFound) {
			continue // committed, or reaped by another replica, meanwhile
		}
		var rec journalRecord
		if err != nil || json.Unmarshal(b, &rec) != nil {
			continue
		}
		for _, e := range rec.Entries {
			c.remove(ctx, e)
		}
		c.records.DeleteRecord(ctx, PendingKind, JournalOwner, in.Name)
	}
}

// remove deletes an output of a journal rolled back, through the store the
// quota counts, and tells the other replicas' quotas.
func (c *Folders) remove(ctx context.Context, e journalEntry) {
	if c.store.Delete(ctx, e.Area, e.Owner, e.ID) == nil && c.deleted != nil {
		c.deleted(ctx, e.ID)
	}
}

// tempOwners is a store whose temporary files (writes and deletes in
// progress) carry the tag of the process that made them (DiskStore): what
// a crashed process left is removed as soon as it is known to be gone.
type tempOwners interface {
	// TagTemp tags the temporary files written from now on with tag.
	TagTemp(tag string)
	// RemoveTemp removes the temporary files whose tag gone reports true
	// for, except those of writes in progress in this process; it returns
	// how many it removed.
	RemoveTemp(gone func(tag string) bool) (int, error)
}

// TagTemp tags the temporary files of st, a store this process opened
// itself, with its instance id, and removes those that processes now gone
// left behind: the remains of writes a crash interrupted go at start-up,
// not after the shortest TTL (Prune), and Reap removes those of processes
// that stop later. A store without tags is left as it is.
func (c *Folders) TagTemp(st fileserve.Store, log *slog.Logger) {
	to, ok := fileserve.As[tempOwners](st)
	if !ok {
		return
	}
	to.TagTemp(c.instance)
	c.temp, c.log = to, log
	c.removeTemp()
}

func (c *Folders) removeTemp() {
	n, err := c.temp.RemoveTemp(c.Gone)
	if err != nil {
		c.log.Warn("could not remove all temporary files of stopped processes; the sweeper retries once they are old", "err", err)
	}
	if n > 0 {
		c.log.Info("removed the temporary files of stopped processes", "count", n)
	}
}

// Reap reaps what processes that stopped while this one runs (replicas
// sharing the volume or the store) left: their unfinished calls' outputs
// and, when the store is tagged, their temporary files. The sweeper runs it
// before every sweep.
func (c *Folders) Reap() {
	c.Sweep()
	if c.temp != nil {
		c.removeTemp()
	}
}

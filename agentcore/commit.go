package agentcore

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// journalFile is the name, in a call's folder, of the journal of the
// outputs its FileResponse has added so far.
const journalFile = "outputs.pending"

// outputJournal makes the outputs of one FileResponse one commit. Before
// each output becomes visible in the store (fileserve.NewFile.Pending), its
// area, owner and id are appended to a journal in the call's folder and
// synced; once every output is stored the journal is removed, and only then
// are the download URLs handed out. A process that crashes in between leaves
// the journal in its call folder, and the next start-up sweep of abandoned
// call folders (removeAbandonedCallFolders) deletes every file it lists
// before removing the folder: after a crash none of the call's outputs stays
// stored, on disk and on S3 alike.
type outputJournal struct {
	path    string
	f       *os.File
	entries []journalEntry // what is recorded
}

// journalEntry is a line of the journal.
type journalEntry struct {
	Area  fileserve.Area `json:"area"`
	Owner string         `json:"owner"`
	ID    string         `json:"id"`
}

func newOutputJournal(callDir string) *outputJournal {
	return &outputJournal{path: filepath.Join(callDir, journalFile)}
}

// record appends m to the journal and syncs it; it is the Pending hook of
// every output, so a file is journaled before anyone can see it.
func (j *outputJournal) record(m fileserve.Meta) error {
	e := journalEntry{Area: m.Area, Owner: m.Owner, ID: m.ID}
	if slices.Contains(j.entries, e) {
		return nil
	}
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
	j.entries = append(j.entries, e)
	return nil
}

// rollback deletes every output recorded so far: a failed response keeps
// none, including one whose store failed after making it visible.
func (j *outputJournal) rollback(ctx context.Context, st fileserve.Store) {
	ctx = context.WithoutCancel(ctx)
	for _, e := range j.entries {
		_ = st.Delete(ctx, e.Area, e.Owner, e.ID)
	}
}

// done ends the commit: the outputs recorded are kept (commit) or are
// already deleted by the caller; either way the journal goes.
func (j *outputJournal) done() {
	if j.f != nil {
		j.f.Close()
		os.Remove(j.path)
	}
}

// rollbackJournals deletes from st every file listed in the journals of
// the call folders under instanceDir, the folder of a process that is gone:
// the outputs of calls it did not finish. It reports how many it deleted.
func rollbackJournals(st fileserve.Store, instanceDir string) int {
	if st == nil {
		return 0
	}
	journals, _ := filepath.Glob(filepath.Join(instanceDir, "*", journalFile))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := 0
	for _, path := range journals {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var e journalEntry
			// A torn last line is a file that never became visible.
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			if st.Delete(ctx, e.Area, e.Owner, e.ID) == nil {
				n++
			}
		}
		f.Close()
	}
	return n
}

// removeDeadTemp tags the temporary files of a store the service opened
// itself with this process's instance id, and removes those that processes
// now gone left behind (fileserve.TempOwners): the remains of writes a
// crash interrupted go at start-up, not after the shortest TTL. A store the
// program handed in (Config.Store) may be shared with other services of the
// process, so its temporary files are left to Prune. It returns the store's
// TempOwners when it was tagged, nil otherwise.
func (s *Service) removeDeadTemp(st fileserve.Store) fileserve.TempOwners {
	to, ok := st.(fileserve.TempOwners)
	if !ok || s.cfg.Store != nil {
		return nil
	}
	to.TagTemp(s.calls.instance)
	s.removeTempOf(to)
	return to
}

func (s *Service) removeTempOf(to fileserve.TempOwners) {
	n, err := to.RemoveTemp(s.calls.gone)
	if err != nil {
		s.log.Warn("could not remove all temporary files of stopped processes; the sweeper retries once they are old", "err", err)
	}
	if n > 0 {
		s.log.Info("removed the temporary files of stopped processes", "count", n)
	}
}

// reapStopped reaps what processes that stopped while this one runs
// (replicas sharing the volume) left: their unfinished calls' outputs and,
// when temp is not nil, their temporary files. The sweeper runs it before
// every sweep.
func (s *Service) reapStopped(temp fileserve.TempOwners) {
	s.calls.sweep()
	if temp != nil {
		s.removeTempOf(temp)
	}
}

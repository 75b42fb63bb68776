package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// One naming rule for produced files: a file is saved under the name the
// model knows it by, its registry name, in a folder of this gateway run
// under --out (out/2026-12-02_101503/report.pdf). The registry starts empty
// with each run, and so does the run's folder, so a name the registry hands
// out is free in the folder: report.pdf in the conversation is report.pdf
// on disk, whatever earlier runs left in --out, and report (2).pdf is the
// second report of this conversation in both. The path the model is told is
// absolute, so it is right whatever folder the host started the gateway in.

// outFolder is where a gateway run saves produced files.
type outFolder struct {
	parent string // --out, absolute
	stamp  string // the run's folder name, before a clash numbers it

	mu  sync.Mutex
	dir string // the run's folder once made; "" before the first file
}

// runStamp names a run's folder after its start, sortable and free of
// characters some file systems refuse.
const runStamp = "2006-01-02_150405"

// newOutFolder is the folder of a run started at start under out; nothing is
// made on disk until a file is saved.
func newOutFolder(out string, start time.Time) (*outFolder, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("gateway: --out %s: %w", out, err)
	}
	return &outFolder{parent: abs, stamp: start.Format(runStamp)}, nil
}

// folder returns the run's folder, making it (and --out) on first use. A
// folder of the same name (another run started in the same second) makes
// this one "<stamp>-2", "-3", ...
func (o *outFolder) folder() (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dir != "" {
		return o.dir, nil
	}
	if err := os.MkdirAll(o.parent, 0o755); err != nil {
		return "", fmt.Errorf("make --out %s: %w", o.parent, err)
	}
	for i := 1; i < 1000; i++ {
		name := o.stamp
		if i > 1 {
			name = fmt.Sprintf("%s-%d", o.stamp, i)
		}
		dir := filepath.Join(o.parent, name)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			o.dir = dir
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("make a folder for this run in --out %s: %w", o.parent, err)
		}
	}
	return "", fmt.Errorf("make a folder for this run in --out %s: every name like %s is taken", o.parent, o.stamp)
}

package client

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentura/agentura/filename"
	"github.com/agentura/agentura/filetype"
)

// DefaultTTL is how long a registry keeps a file unless told otherwise.
const DefaultTTL = time.Hour

// SourceUpload is the source of a file the user attached.
const SourceUpload = "upload"

// ToolSource is the source of a file the tool called name produced:
// "tool:<name>".
func ToolSource(name string) string { return "tool:" + name }

// ErrNotFound is returned (wrapped in a *NotFoundError) when a name is not in
// the registry.
var ErrNotFound = errors.New("file not in the registry")

// NotFoundError says which name was asked for and which names the registry
// holds, so that the model (or the person) can correct the reference.
type NotFoundError struct {
	Name  string
	Known []string
}

// Error names the missing file and the files the registry holds.
func (e *NotFoundError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("file %q is not in the registry, which holds no files: attach it first", e.Name)
	}
	return fmt.Sprintf("file %q is not in the registry; the files known are: %s. Names must match exactly",
		e.Name, strings.Join(e.Known, ", "))
}

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Entry is one file of a registry.
type Entry struct {
	// Name is the registry name, the only thing the model sees; it may hold
	// folders ("images/diagram_002.png").
	Name string `json:"name"`
	// Path is where the blob lies on disk: the registry folder joined with Name.
	Path string `json:"path"`
	// MIMEType is detected from content and name.
	MIMEType string `json:"mime_type"`
	// Size is the length in bytes.
	Size int64 `json:"size_bytes"`
	// SHA256 is the hex digest of the content.
	SHA256 string `json:"sha256"`
	// Source is SourceUpload or ToolSource(tool).
	Source string `json:"source"`
	// AddedAt is when the file entered the registry.
	AddedAt time.Time `json:"added_at"`
	// ExpiresAt is when the registry forgets it.
	ExpiresAt time.Time `json:"expires_at"`
}

// Describe is the entry as a model sees it: "invoice.pdf (PDF, 240 KB)".
func (e Entry) Describe() string { return filetype.Describe(e.Name, e.MIMEType, e.Size) }

// RegistryOptions tunes a registry; the zero value is usable.
type RegistryOptions struct {
	// TTL is how long an entry lives; 0 means DefaultTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Registry is a session's files, kept on disk under their names: a nested
// name makes folders. Adding a name that is taken stores the file under a
// distinct name ("report (2).pptx"); lookups are exact. Entries expire after
// the TTL. It is safe for concurrent use.
type Registry struct {
	dir   string
	owned bool // dir was made by NewRegistry and is removed by Close
	ttl   time.Duration
	now   func() time.Time

	mu       sync.Mutex
	entries  map[string]Entry
	reserved map[string]bool // names being written
	closed   bool
}

// NewRegistry opens a registry in dir, which must be empty or absent; dir ""
// makes a private temporary folder that Close removes.
func NewRegistry(dir string, opts *RegistryOptions) (*Registry, error) {
	opts = cmp.Or(opts, &RegistryOptions{})
	r := &Registry{ttl: opts.TTL, now: opts.Now, entries: map[string]Entry{}, reserved: map[string]bool{}}
	if r.ttl <= 0 {
		r.ttl = DefaultTTL
	}
	if r.now == nil {
		r.now = time.Now
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "agentura-registry-")
		if err != nil {
			return nil, fmt.Errorf("make a registry folder: %w", err)
		}
		r.dir, r.owned = d, true
	} else {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("make the registry folder %s: %w", dir, err)
		}
		list, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("read the registry folder: %w", err)
		}
		if len(list) > 0 {
			return nil, fmt.Errorf("registry folder %s is not empty: a registry is scoped to one session, give it a fresh folder", dir)
		}
		r.dir = dir
	}
	return r, nil
}

// Dir is the folder the blobs lie in.
func (r *Registry) Dir() string { return r.dir }

// Close forgets every entry and removes the blobs (and the folder, if the
// registry made it).
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.entries = map[string]Entry{}
	if r.owned {
		return os.RemoveAll(r.dir)
	}
	list, err := os.ReadDir(r.dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range list {
		errs = append(errs, os.RemoveAll(filepath.Join(r.dir, e.Name())))
	}
	return errors.Join(errs...)
}

// Add streams src into the registry under name (or a distinct name if name is
// taken) and returns the entry. Nothing is visible until the whole content is
// on disk. ctx is checked when the copy ends; a reader bound to ctx (an HTTP
// body) stops with it.
func (r *Registry) Add(ctx context.Context, name string, src io.Reader, source string) (Entry, error) {
	clean, err := CleanName(name)
	if err != nil {
		return Entry{}, err
	}
	final, err := r.reserve(clean)
	if err != nil {
		return Entry{}, err
	}
	e, err := r.write(ctx, final, src, source)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.reserved, final)
	if err != nil {
		return Entry{}, err
	}
	if r.closed {
		os.Remove(e.Path)
		return Entry{}, errors.New("registry is closed")
	}
	r.entries[final] = e
	return e, nil
}

// AddFile copies the file at path into the registry under name ("" means the
// file's base name).
func (r *Registry) AddFile(ctx context.Context, path, name, source string) (Entry, error) {
	// Without blocking: a named pipe would hold the open until a writer
	// came; the check on the open file below refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Entry{}, fmt.Errorf("attach %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return Entry{}, fmt.Errorf("attach %s: %w", path, err)
	} else if !st.Mode().IsRegular() {
		return Entry{}, fmt.Errorf("attach %s: not a regular file", path)
	}
	name = cmp.Or(name, filepath.Base(path))
	return r.Add(ctx, name, f, source)
}

// write copies src into a temporary file, hashing and sniffing on the way,
// and renames it to its place.
func (r *Registry) write(ctx context.Context, name string, src io.Reader, source string) (Entry, error) {
	tmpDir := filepath.Join(r.dir, ".tmp")
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
		return Entry{}, fmt.Errorf("registry: %w", err)
	}
	tmp, err := os.CreateTemp(tmpDir, "blob-")
	if err != nil {
		return Entry{}, fmt.Errorf("registry: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), src)
	if err == nil {
		err = ctx.Err()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Entry{}, fmt.Errorf("store %s: %w", name, err)
	}
	// The head is read back from the page cache: one sniffer, filetype's.
	mimeType, err := filetype.DetectFile(tmp.Name(), name)
	if err != nil {
		return Entry{}, fmt.Errorf("store %s: %w", name, err)
	}
	dst := filepath.Join(r.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return Entry{}, fmt.Errorf("store %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return Entry{}, fmt.Errorf("store %s: %w", name, err)
	}
	done = true
	now := r.now()
	return Entry{
		Name:      name,
		Path:      dst,
		MIMEType:  mimeType,
		Size:      n,
		SHA256:    hex.EncodeToString(h.Sum(nil)),
		Source:    source,
		AddedAt:   now,
		ExpiresAt: now.Add(r.ttl),
	}, nil
}

// reserve picks name or, if it is taken (by an entry, a file being written,
// or a folder of nested names), "name (2).ext", "name (3).ext", ...
func (r *Registry) reserve(name string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", errors.New("registry is closed")
	}
	r.sweepLocked()
	for i := 1; i < 10000; i++ {
		cand := filename.Numbered(name, i)
		if !r.takenLocked(cand) {
			r.reserved[cand] = true
			return cand, nil
		}
	}
	return "", fmt.Errorf("registry: no free name like %q", name)
}

// takenLocked reports whether name collides with an entry or a reservation,
// as the same name, as a folder of one, or as a file where a folder must be.
func (r *Registry) takenLocked(name string) bool {
	clash := func(other string) bool {
		return other == name || strings.HasPrefix(other, name+"/") || strings.HasPrefix(name, other+"/")
	}
	for n := range r.entries {
		if clash(n) {
			return true
		}
	}
	for n := range r.reserved {
		if clash(n) {
			return true
		}
	}
	return false
}

// Lookup returns the entry named exactly name.
func (r *Registry) Lookup(name string) (Entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked()
	if e, ok := r.entries[name]; ok {
		return e, nil
	}
	return Entry{}, &NotFoundError{Name: name, Known: r.namesLocked()}
}

// Entries returns the live entries, sorted by name.
func (r *Registry) Entries() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked()
	out := make([]Entry, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names returns the names of the live entries, sorted.
func (r *Registry) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked()
	return r.namesLocked()
}

func (r *Registry) namesLocked() []string {
	names := make([]string, 0, len(r.entries))
	for n := range r.entries {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Describe is the registry as a model sees it: one line per file,
// "invoice.pdf (PDF, 240 KB)".
func (r *Registry) Describe() string {
	var b strings.Builder
	for _, e := range r.Entries() {
		b.WriteString(e.Describe())
		b.WriteByte('\n')
	}
	return b.String()
}

// Open opens the blob of the entry called name.
func (r *Registry) Open(name string) (*os.File, Entry, error) {
	e, err := r.Lookup(name)
	if err != nil {
		return nil, Entry{}, err
	}
	f, err := os.Open(e.Path)
	if err != nil {
		return nil, Entry{}, fmt.Errorf("open %s: %w", name, err)
	}
	return f, e, nil
}

// Remove forgets the entry called name and deletes its blob.
func (r *Registry) Remove(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[name]
	if !ok {
		return &NotFoundError{Name: name, Known: r.namesLocked()}
	}
	r.removeLocked(e)
	return nil
}

// Sweep removes the entries whose TTL has passed and returns how many.
func (r *Registry) Sweep() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sweepLocked()
}

func (r *Registry) sweepLocked() int {
	now := r.now()
	n := 0
	for _, e := range r.entries {
		if !now.Before(e.ExpiresAt) {
			r.removeLocked(e)
			n++
		}
	}
	return n
}

// removeLocked deletes e's blob and the folders its name made, if empty.
func (r *Registry) removeLocked(e Entry) {
	delete(r.entries, e.Name)
	os.Remove(e.Path)
	for dir := path.Dir(e.Name); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if os.Remove(filepath.Join(r.dir, filepath.FromSlash(dir))) != nil {
			break
		}
	}
}

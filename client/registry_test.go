package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

func newRegistry(t *testing.T, opts *client.RegistryOptions) *client.Registry {
	t.Helper()
	r, err := client.NewRegistry("", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func add(t *testing.T, r *client.Registry, name, content string) client.Entry {
	t.Helper()
	e, err := r.Add(context.Background(), name, strings.NewReader(content), client.SourceUpload)
	if err != nil {
		t.Fatalf("add %s: %v", name, err)
	}
	return e
}

func TestRegistryKeepsBlobsOnDiskUnderTheirNames(t *testing.T) {
	r := newRegistry(t, nil)
	e := add(t, r, "images/diagram_002.png", "\x89PNG\r\n\x1a\nnot really")
	if e.Path != filepath.Join(r.Dir(), "images", "diagram_002.png") {
		t.Errorf("path %s", e.Path)
	}
	b, err := os.ReadFile(e.Path)
	if err != nil || !strings.HasSuffix(string(b), "not really") {
		t.Fatalf("blob: %q %v", b, err)
	}
	if e.MIMEType != "image/png" || e.Size != int64(len(b)) || len(e.SHA256) != 64 || e.Source != "upload" {
		t.Errorf("entry %+v", e)
	}
	if e.ExpiresAt.Sub(e.AddedAt) != client.DefaultTTL {
		t.Errorf("TTL %v, want %v", e.ExpiresAt.Sub(e.AddedAt), client.DefaultTTL)
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), ".tmp")); err == nil {
		entries, _ := os.ReadDir(filepath.Join(r.Dir(), ".tmp"))
		if len(entries) != 0 {
			t.Errorf("temporary files left: %v", entries)
		}
	}
}

func TestRegistrySameNameGetsADistinctName(t *testing.T) {
	r := newRegistry(t, nil)
	first := add(t, r, "report.pptx", "one")
	second := add(t, r, "report.pptx", "two")
	third := add(t, r, "images/a.png", "x")
	fourth := add(t, r, "images/a.png", "y")
	folder := add(t, r, "images", "a file where a folder is")
	if first.Name != "report.pptx" || second.Name != "report (2).pptx" || third.Name != "images/a.png" ||
		fourth.Name != "images/a (2).png" || folder.Name != "images (2)" {
		t.Errorf("names %q %q %q %q %q", first.Name, second.Name, third.Name, fourth.Name, folder.Name)
	}
	if b, _ := os.ReadFile(first.Path); string(b) != "one" {
		t.Errorf("the first report was overwritten: %q", b)
	}
}

func TestRegistryConcurrentAddsNeverShareAName(t *testing.T) {
	r := newRegistry(t, nil)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Add(context.Background(), "same.txt", strings.NewReader(fmt.Sprint(i)), client.SourceUpload); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := len(r.Names()); n != 20 {
		t.Errorf("%d entries, want 20", n)
	}
}

func TestRegistryLookupIsExact(t *testing.T) {
	r := newRegistry(t, nil)
	add(t, r, "invoice.pdf", "%PDF-1.4")
	add(t, r, "images/chart.png", "png")
	for _, miss := range []string{"Invoice.pdf", "invoice", "chart.png", "images/chart", " invoice.pdf"} {
		_, err := r.Lookup(miss)
		var nf *client.NotFoundError
		if !errors.As(err, &nf) || !errors.Is(err, client.ErrNotFound) {
			t.Errorf("Lookup(%q) = %v, want a NotFoundError", miss, err)
			continue
		}
		if !strings.Contains(err.Error(), "images/chart.png, invoice.pdf") {
			t.Errorf("error %q does not name the known files", err)
		}
	}
	if e, err := r.Lookup("images/chart.png"); err != nil || e.Name != "images/chart.png" {
		t.Errorf("exact lookup: %v", err)
	}
	empty := newRegistry(t, nil)
	if _, err := empty.Lookup("x"); err == nil || !strings.Contains(err.Error(), "holds no files") {
		t.Errorf("empty registry: %v", err)
	}
}

func TestRegistryEntriesExpire(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := newRegistry(t, &client.RegistryOptions{TTL: time.Minute, Now: func() time.Time { return now }})
	old := add(t, r, "docs/old.txt", "old")
	now = now.Add(30 * time.Second)
	add(t, r, "new.txt", "new")
	now = now.Add(31 * time.Second)
	if _, err := r.Lookup("docs/old.txt"); err == nil {
		t.Error("an expired entry was found")
	}
	if names := r.Names(); len(names) != 1 || names[0] != "new.txt" {
		t.Errorf("names %v", names)
	}
	if _, err := os.Stat(old.Path); !os.IsNotExist(err) {
		t.Errorf("the expired blob is still on disk: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(old.Path)); !os.IsNotExist(err) {
		t.Errorf("the emptied folder is still there: %v", err)
	}
	now = now.Add(time.Minute)
	if n := r.Sweep(); n != 1 {
		t.Errorf("Sweep removed %d, want 1", n)
	}
}

func TestRegistryDescribe(t *testing.T) {
	r := newRegistry(t, nil)
	add(t, r, "invoice.pdf", "%PDF-1.4\n"+strings.Repeat("x", 240*1024))
	add(t, r, "notes.md", "# notes\n")
	want := "invoice.pdf (PDF, 240 KB)\nnotes.md (Markdown, 8 B)\n"
	if got := r.Describe(); got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}

func TestRegistryCloseRemovesEverything(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reg")
	r, err := client.NewRegistry(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	add(t, r, "a/b/c.txt", "c")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("left after Close: %v", entries)
	}
	if _, err := r.Add(context.Background(), "x", strings.NewReader("x"), client.SourceUpload); err == nil {
		t.Error("Add after Close succeeded")
	}
	writeIn := t.TempDir()
	os.WriteFile(filepath.Join(writeIn, "x"), nil, 0o600)
	if _, err := client.NewRegistry(writeIn, nil); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty folder: %v", err)
	}
}

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{
		"report.pptx":            "report.pptx",
		"images/diagram_002.png": "images/diagram_002.png",
		"../../etc/passwd":       "etc/passwd",
		"/abs/x.txt":             "abs/x.txt",
		`dir\win.txt`:            "dir/win.txt",
		"a//b/./c":               "a/b/c",
		".hidden":                "hidden",
		"evil\u202egpj.exe":      "evilgpj.exe",
		"tab\there.txt":          "tabhere.txt",
	} {
		if got, err := client.CleanName(in); err != nil || got != want {
			t.Errorf("CleanName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "..", "/", " . / .. "} {
		if _, err := client.CleanName(bad); err == nil {
			t.Errorf("CleanName(%q) succeeded", bad)
		}
	}
}

// A name any file system can hold: a produced file of another server may
// carry a name of any length, and a segment over 255 bytes cannot be
// created. It is shortened, keeping its extension, as the agent does.
func TestRegistryTakesOverlongNames(t *testing.T) {
	r := newRegistry(t, nil)
	long := strings.Repeat("é", 200) + ".pdf" // 404 bytes
	e := add(t, r, "reports/"+long, "x")
	dir, base := filepath.Split(e.Name)
	if dir != "reports/" || len(base) > 255 || !strings.HasSuffix(base, ".pdf") {
		t.Errorf("stored as %q (%d bytes)", e.Name, len(base))
	}
	// A second one of the same name still gets a distinct name that fits.
	e2 := add(t, r, "reports/"+long, "y")
	if e2.Name == e.Name || len(filepath.Base(e2.Name)) > 255 {
		t.Errorf("second stored as %q (%d bytes)", e2.Name, len(filepath.Base(e2.Name)))
	}
	for _, name := range []string{".  .", ". x/. .", " ..a/b"} {
		got, err := client.CleanName(name)
		for _, seg := range strings.Split(got, "/") {
			if err == nil && (seg == "" || strings.HasPrefix(seg, ".") || strings.TrimSpace(seg) != seg) {
				t.Errorf("CleanName(%q) = %q: segment %q", name, got, seg)
			}
		}
	}
}

// A named pipe given to AddFile is refused at once, not waited on until a
// writer comes (the gateway's E20, on the host side's own attach).
func TestAddFileRefusesNamedPipe(t *testing.T) {
	reg, err := client.NewRegistry("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	fifo := filepath.Join(t.TempDir(), "pipe")
	requiretool.NamedPipe(t, fifo)
	done := make(chan error, 1)
	go func() {
		_, err := reg.AddFile(context.Background(), fifo, "", client.SourceUpload)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("AddFile of a named pipe: %v, want a refusal", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AddFile of a named pipe still waits after 10 s")
	}
}

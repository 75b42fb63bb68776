package a2acall

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/transfer"
)

// TestAssembly: chunks in any order make one file; the ranges missing are
// known; a file whose bytes do not hash to the announced sha256, or that
// misses bytes with no URL to fetch them from, is never saved; the
// temporary files go.
func TestAssembly(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	data := bytes.Repeat([]byte("0123456789"), 10)
	as := &assemblies{max: 1 << 20}
	defer as.close()
	for _, s := range []span{{60, 100}, {0, 30}, {30, 60}} {
		as.write("a", "f.bin", s.from, data[s.from:s.to])
	}
	as.write("b", "g.bin", 10, data[:10])
	if got := as.byID["a"].missing(120); !slices.Equal(got, []span{{100, 120}}) {
		t.Errorf("missing of a 120-byte file: %v, want [{100 120}]", got)
	}
	if got := as.byID["b"].missing(30); !slices.Equal(got, []span{{0, 10}, {20, 30}}) {
		t.Errorf("missing: %v, want [{0 10} {20 30}]", got)
	}
	as.write("c", "h.bin", 0, []byte("x"))
	as.write("c", "h.bin", 1<<20-1, []byte("xy"))
	as.write("c", "h.bin", 1, []byte("y")) // dropped: the file is refused
	if c := as.byID["c"]; c.err == nil || !strings.Contains(c.err.Error(), "over the cap") || c.f != nil {
		t.Errorf("a chunk past the cap: err = %v, temporary file %v; want the file refused and its temporary file gone", c.err, c.f)
	}
	if _, err := (&Client{}).assembled(context.Background(), nil, nil, t.TempDir(), &a2a.Artifact{}, nil, as.byID["c"]); err == nil || !strings.Contains(err.Error(), "a2acall.Client.MaxBytes") {
		t.Errorf("a refused file: err = %v, want the cap's error naming the setting", err)
	}
	sum := sha256.Sum256(data)
	art := func(id a2a.ArtifactID, size int, digest string) *a2a.Artifact {
		return &a2a.Artifact{ID: id, Name: "f.bin", Metadata: map[string]any{"size_bytes": float64(size), transfer.MetaSHA256: digest}}
	}
	c := &Client{}
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := c.assembled(ctx, nil, nil, dir, art("a", 100, strings.Repeat("0", 64)), nil, as.byID["a"]); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("a wrong sha256: err = %v", err)
	}
	if _, err := c.assembled(ctx, nil, nil, dir, art("b", 30, hex.EncodeToString(sum[:])), nil, as.byID["b"]); err == nil || !strings.Contains(err.Error(), "never arrived") {
		t.Errorf("bytes missing without a URL: err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused file left %v in the folder", entries)
	}
	f, err := c.assembled(ctx, nil, nil, dir, art("a", 100, hex.EncodeToString(sum[:])), nil, as.byID["a"])
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, data) || f.Path != filepath.Join(dir, "f.bin") {
		t.Errorf("saved %s: %q", f.Path, got)
	}
	as.close()
	if left, _ := filepath.Glob(filepath.Join(tmp, "a2a-chunks-*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

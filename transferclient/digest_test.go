package transferclient

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/agentura/agentura/transfer"
)

func TestVerifySHA256(t *testing.T) {
	content := strings.Repeat("agentura ", 10000)
	sum := sha256.Sum256([]byte(content))
	good := hex.EncodeToString(sum[:])

	dir := t.TempDir()
	if s, err := Save(dir, "ok.txt", transfer.VerifySHA256(strings.NewReader(content), strings.ToUpper(good), "ok.txt"), 0, 0); err != nil || s.Size != int64(len(content)) {
		t.Fatalf("Save with the right digest: %+v, %v", s, err)
	}
	// One byte changed: refused, nothing saved under the name.
	bad := "x" + content[1:]
	_, err := Save(dir, "bad.txt", transfer.VerifySHA256(strings.NewReader(bad), good, "bad.txt"), 0, 0)
	if !errors.Is(err, transfer.ErrDigestMismatch) || !strings.Contains(err.Error(), "nothing was saved") {
		t.Fatalf("Save with a wrong digest: %v, want transfer.ErrDigestMismatch saying nothing was saved", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "ok.txt" {
		t.Errorf("folder after the refused save: %v, want ok.txt alone", entries)
	}
	// A truncated stream fails as well.
	if _, err := Save(dir, "cut.txt", transfer.VerifySHA256(strings.NewReader(content[:100]), good, "cut.txt"), 0, 0); !errors.Is(err, transfer.ErrDigestMismatch) {
		t.Errorf("truncated content: %v, want transfer.ErrDigestMismatch", err)
	}
	// A malformed digest fails rather than passing unchecked.
	if _, err := Save(dir, "m.txt", transfer.VerifySHA256(strings.NewReader(content), "abc", "m.txt"), 0, 0); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
		t.Errorf("malformed digest: %v", err)
	}
	// No digest: the reader itself.
	r := strings.NewReader("x")
	if transfer.VerifySHA256(r, "", "n") != r {
		t.Error("an empty digest should check nothing")
	}
}

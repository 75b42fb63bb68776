//go:build !windows

package client_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/client"
)

// TestOpenTokenFileRefusesOthersReading: a token file the group or others
// may read or write is refused, with the chmod (or delete) to fix it; once
// it is 0600 it opens, as does a file not there yet.
func TestOpenTokenFileRefusesOthersReading(t *testing.T) {
	dir := t.TempDir()
	if _, err := client.OpenTokenFile(filepath.Join(dir, "new", "tokens.json")); err != nil {
		t.Fatalf("a token file not there yet: %v", err)
	}
	path := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := client.OpenTokenFile(path)
		if err == nil {
			t.Fatalf("a token file of mode %04o was opened", mode)
		}
		for _, want := range []string{path, "chmod 600 " + path, "delete it"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("mode %04o: the error %q does not say %q", mode, err, want)
			}
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		os.Chmod(path, mode)
		if _, err := client.OpenTokenFile(path); err != nil {
			t.Errorf("a token file of mode %04o: %v", mode, err)
		}
	}
}

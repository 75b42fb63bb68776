package filehttp

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/fileserve"
)

// TestNewURLsCarryUUIDs: a download URL names its file by a canonical UUID.
func TestNewURLsCarryUUIDs(t *testing.T) {
	env := newTestEnv(t, "mux", nil)
	m := env.put(t, fileserve.Outputs, "alice", "a.txt", []byte("hello"))
	u := env.signedURL(t, m)
	id := strings.Split(strings.TrimPrefix(u, env.ts.URL+"/files/"), "/")[0]
	if len(id) != 36 || id[14] != '7' || !fileserve.ValidID(id) {
		t.Fatalf("URL %s: id %q is not a canonical version 7 UUID", u, id)
	}
}

// TestLegacyIDStillDownloads: a file stored before ids were UUIDs, under 32
// hex digits, is served to a URL signed for that id until it expires.
func TestLegacyIDStillDownloads(t *testing.T) {
	for _, mount := range mounts {
		t.Run(mount, func(t *testing.T) {
			env := newTestEnv(t, mount, nil)
			content := []byte("made by an older agentura")
			m := env.put(t, fileserve.Outputs, "alice", "old.txt", content)
			legacy := "5fc2205e8aa1fb8fd0be56b4181c2adf"
			dir := filepath.Join(env.st.Root(), "outputs", fileserve.OwnerKey("alice"))
			if err := os.Rename(filepath.Join(dir, m.ID), filepath.Join(dir, legacy)); err != nil {
				t.Fatal(err)
			}
			meta := filepath.Join(dir, legacy, "meta.json")
			b, err := os.ReadFile(meta)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(meta, bytes.ReplaceAll(b, []byte(m.ID), []byte(legacy)), 0o600); err != nil {
				t.Fatal(err)
			}
			m.ID = legacy
			u := env.signedURL(t, m)
			if !strings.Contains(u, "/files/"+legacy+"/old.txt?token=") {
				t.Fatalf("URL %s does not name the legacy id", u)
			}
			resp, body := do(t, "GET", u, nil, nil)
			if resp.StatusCode != 200 || !bytes.Equal(body, content) {
				t.Fatalf("GET of a legacy id: %d %q", resp.StatusCode, body)
			}
		})
	}
}

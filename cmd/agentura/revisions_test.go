package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentura/agentura/internal/testkit/thirdparty"
)

// Against a server of someone else's that speaks only 2025-11-25 (the
// go-sdk's own, pinned to it, with sessions or without; no /uploads, no
// /files/), the CLI asks for 2026-07-28 first (server/discover), negotiates
// down through initialize, makes the call on 2025-11-25 with the attached
// file sent inline, and saves the file the tool hands back embedded.
func TestCallThirdPartyServerOf20251125(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "sessions", true: "stateless"}[stateless], func(t *testing.T) {
			srv := thirdparty.Start(t, stateless, "2025-11-25")
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "note.txt"), []byte("hello"))
			r := runCLI(t, dir, "call", srv.Endpoint, "reverse", "--attach", "note.txt", "--json", `{"source": "note.txt"}`,
				"--out", "o", "--output", "json")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("want exit 0 and a quiet stderr; got\n%s", r)
			}
			var out callOutput
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
			}
			if len(out.Files) != 1 || out.Files[0].Path != "o/reversed-note.txt" || out.Files[0].SHA256 != sha([]byte("olleh")) {
				t.Fatalf("text %q, files %+v; want o/reversed-note.txt", out.Text, out.Files)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "o/reversed-note.txt")); err != nil || string(got) != "olleh" {
				t.Errorf("saved %q (%v), want olleh", got, err)
			}

			seen := srv.Requests()
			if len(seen) == 0 || seen[0].Method != "server/discover" || seen[0].Revision != "2026-07-28" {
				t.Errorf("the CLI's first request: %+v; want server/discover on 2026-07-28", seen)
			}
			var initialized, called bool
			for _, q := range seen {
				switch q.Method {
				case "initialize":
					initialized = q.Asked == "2025-11-25"
				case "tools/call":
					called = true
					if q.Revision != "2025-11-25" {
						t.Errorf("tools/call on revision %q, want 2025-11-25", q.Revision)
					}
				}
			}
			if !initialized || !called {
				t.Errorf("requests %+v; want an initialize asking for 2025-11-25 and a tools/call", seen)
			}
		})
	}
}

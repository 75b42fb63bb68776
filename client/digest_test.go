package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer"
)

// Each download is checked against the sha256 the result announced (in the
// structured content or the resource_link's _meta); a mismatch is refused
// with a clear reason and leaves nothing in the registry, and the registry
// entry of a good file keeps the digest.
func TestCollectVerifiesDigests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("served bytes"))
	}))
	defer srv.Close()
	sum := sha256.Sum256([]byte("served bytes"))
	good := hex.EncodeToString(sum[:])
	wrong := strings.Repeat("0", 64)

	reg := newRegistry(t, nil)
	mw, err := client.New(client.Config{Registry: reg, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	res := &mcp.CallToolResult{
		StructuredContent: map[string]any{"files": []any{
			map[string]any{"download_url": srv.URL + "/files/a", "filename": "good.txt", "size_bytes": float64(12), "sha256": good},
		}},
		Content: []mcp.Content{
			&mcp.ResourceLink{URI: srv.URL + "/files/a", Name: "good.txt"},
			&mcp.ResourceLink{URI: srv.URL + "/files/b", Name: "bad.txt", Meta: mcp.Meta{transfer.MetaSHA256: wrong}},
		},
	}
	mw.Collect(context.Background(), "t", res)
	if names := client.ProducedNames(res); len(names) != 1 || names[0] != "good.txt" {
		t.Fatalf("produced %v, want good.txt alone", names)
	}
	failed := client.FailedFiles(res)
	if len(failed) != 1 || !strings.Contains(failed[0], "bad.txt") || !strings.Contains(failed[0], "sha256") {
		t.Errorf("failed %v, want bad.txt with a sha256 reason", failed)
	}
	e, err := reg.Lookup("good.txt")
	if err != nil || e.SHA256 != good {
		t.Errorf("registry entry %+v, %v; want sha256 %s", e, err, good)
	}
	if _, err := reg.Lookup("bad.txt"); err == nil {
		t.Error("bad.txt is in the registry despite its digest mismatch")
	}
}

// A download cut short on the network is tried once more (a GET is
// idempotent, and nothing of the failed try is kept); a download the agent
// refuses (403) is not.
func TestDownloadRetriedOnceAfterANetworkFailure(t *testing.T) {
	payload := []byte(strings.Repeat("the whole file\n", 4096))
	var gets, refusals atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/files/refused" {
			refusals.Add(1)
			http.Error(w, `{"error": "token expired"}`, http.StatusForbidden)
			return
		}
		if gets.Add(1) == 1 {
			// Half the file, then the connection drops.
			w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
			w.Write(payload[:len(payload)/2])
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.Write(payload)
	}))
	defer srv.Close()
	reg := newRegistry(t, nil)
	mw, err := client.New(client.Config{Registry: reg, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ResourceLink{URI: srv.URL + "/files/a", Name: "a.txt"},
		&mcp.ResourceLink{URI: srv.URL + "/files/refused", Name: "b.txt"},
	}}
	mw.Collect(context.Background(), "t", res)
	if names := client.ProducedNames(res); len(names) != 1 || names[0] != "a.txt" || gets.Load() != 2 {
		t.Fatalf("produced %v after %d GETs, want a.txt after 2 (the first cut short)", names, gets.Load())
	}
	if e, _ := reg.Lookup("a.txt"); e.Size != int64(len(payload)) {
		t.Errorf("a.txt has %d bytes, want %d", e.Size, len(payload))
	}
	if refusals.Load() != 1 {
		t.Errorf("the refused download was asked %d times, want once", refusals.Load())
	}
}

// A download whose bytes stop coming fails once StallTimeout passes
// without one, saying so, instead of holding the tool call forever; one
// that keeps trickling (each byte within the timeout) arrives however long
// it takes in all.
func TestDownloadStallFailsTrickleArrives(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		for i := range 10 {
			if r.URL.Path == "/files/stalls" && i == 3 {
				select { // silent until the client gives up
				case <-r.Context().Done():
				case <-release:
				}
				return
			}
			w.Write([]byte{'a' + byte(i)})
			w.(http.Flusher).Flush()
			time.Sleep(150 * time.Millisecond) // 1.5 s in all, 0.15 s a byte
		}
	}))
	defer srv.Close()
	reg := newRegistry(t, nil)
	mw, err := client.New(client.Config{Registry: reg, BaseURL: srv.URL, StallTimeout: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ResourceLink{URI: srv.URL + "/files/trickles", Name: "slow.txt"},
		&mcp.ResourceLink{URI: srv.URL + "/files/stalls", Name: "stuck.txt"},
	}}
	start := time.Now()
	mw.Collect(context.Background(), "t", res)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("collecting took %v", d)
	}
	if names := client.ProducedNames(res); len(names) != 1 || names[0] != "slow.txt" {
		t.Errorf("produced %v, want slow.txt alone", names)
	}
	if e, _ := reg.Lookup("slow.txt"); e.Size != 10 {
		t.Errorf("slow.txt has %d bytes, want 10", e.Size)
	}
	if text := fmt.Sprint(res.Meta[transfer.MetaFailed]); !strings.Contains(text, "no byte of stuck.txt arrived for 600ms") {
		t.Errorf("the result does not say the download stalled: %s", text)
	}
}

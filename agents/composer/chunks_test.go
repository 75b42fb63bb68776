package composer

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentura/agentura/internal/testkit/a2atest"
	"github.com/agentura/agentura/transfer"
)

// Issue 40: the composer's output goes out as it is rendered. An A2A caller
// that asks for chunks gets the document in chunks at their offsets before
// the last event, which names its URL; the chunks put together are the
// file that URL serves.
func TestComposedDocumentStreamsInChunks(t *testing.T) {
	srv := serveComposer(t, DefaultLimits())
	c, _ := a2atest.Connect(t, srv.URL, "")
	var md strings.Builder
	for i := range 400 {
		fmt.Fprintf(&md, "## Part %d\n\nA paragraph of the plan, number %d, long enough to add up to a few hundred KiB of HTML.\n\n", i, i)
	}
	msg := a2atest.Message("compose_document", map[string]any{"markdown": md.String(), "format": "html"})
	msg.Message.Metadata = map[string]any{transfer.A2AKeyChunks: true}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var (
		assembled bytes.Buffer
		chunks    int
		uri       string
		state     a2a.TaskState
	)
	for ev, err := range c.SendStreamingMessage(ctx, msg) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch ev := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			state = ev.Status.State
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range ev.Artifact.Parts {
				fp, ok := p.(a2a.FilePart)
				if !ok {
					continue
				}
				switch f := fp.File.(type) {
				case a2a.FileBytes:
					off, isChunk := fp.Metadata[transfer.MetaChunkOffset].(float64)
					if !isChunk {
						continue
					}
					if uri != "" {
						t.Fatal("a chunk came after the file's last event")
					}
					if int64(off) != int64(assembled.Len()) {
						t.Fatalf("chunk at %v, want %d", off, assembled.Len())
					}
					data, err := base64.StdEncoding.DecodeString(f.Bytes)
					if err != nil {
						t.Fatal(err)
					}
					assembled.Write(data)
					chunks++
				case a2a.FileURI:
					if ev.LastChunk {
						uri = f.URI
					}
				}
			}
		}
	}
	if state != a2a.TaskStateCompleted || uri == "" {
		t.Fatalf("task %s, file URL %q; want completed with the file's URL", state, uri)
	}
	if chunks < 2 {
		t.Fatalf("%d chunks of %d bytes; want the document in several", chunks, assembled.Len())
	}
	resp, err := http.Get(uri)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	served, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the file: %d %v", resp.StatusCode, err)
	}
	if !bytes.Equal(served, assembled.Bytes()) || !bytes.Contains(served, []byte("Part 399")) {
		t.Errorf("the %d chunks hold %d bytes, the file %d: not the same document", chunks, assembled.Len(), len(served))
	}
}

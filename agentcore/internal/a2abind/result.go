package a2abind

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/transfer"
)

// a2aArtifacts renders a result as A2A artifacts: first "result", with the
// tool's text (and the lines naming each produced file) as a text part and
// the structured content as a data part; then one artifact per produced
// file, named by the file, holding a file part with the signed download URL
// ("uri") and, for a file no larger than EmbedMaxBytes, a second file part
// with the same file's bytes (embedMax: EmbedMaxBytes, or a chunk's size
// for a streamed answer, see execute). A2A v0.3 lets a file part carry "bytes" or
// "uri", never both (a2a-go refuses such a part), hence two parts (for a
// caller that takes chunks, up to a chunk's size). A file
// sent in chunks (chunks.go) is its artifact's last chunk instead: the
// stream's artifact ID, appended, with no bytes (the caller has them).
func (s *Server) a2aArtifacts(ctx context.Context, res *calls.Result, chunks *chunkStreams, embedMax int64) ([]*a2a.TaskArtifactUpdateEvent, error) {
	var out []*a2a.Artifact
	streamed := map[a2a.ArtifactID]bool{}
	lines := res.ProducedLines()
	if res.Text != "" {
		lines = append([]string{res.Text}, lines...)
	}
	main := &a2a.Artifact{ID: a2a.NewArtifactID(), Name: "result"}
	if len(lines) > 0 {
		main.Parts = append(main.Parts, a2a.TextPart{Text: strings.Join(lines, "\n")})
	}
	if data := plainJSON(res.Structured()); len(data) > 0 {
		main.Parts = append(main.Parts, a2a.DataPart{Data: data})
	}
	if len(main.Parts) > 0 {
		out = append(out, main)
	}
	for i, f := range res.Files {
		meta := a2a.FileMeta{Name: f.Filename, MimeType: f.MIMEType}
		art := &a2a.Artifact{
			ID:          a2a.NewArtifactID(),
			Name:        f.Filename,
			Description: filetype.Describe(f.Filename, f.MIMEType, f.SizeBytes),
			Metadata:    map[string]any{"size_bytes": f.SizeBytes, "mime_type": f.MIMEType, transfer.MetaSHA256: f.SHA256},
		}
		for _, uri := range res.LinksOf(i) {
			art.Parts = append(art.Parts, a2a.FilePart{File: a2a.FileURI{FileMeta: meta, URI: uri}})
		}
		id, chunked, err := chunks.finish(f.Filename, f.SizeBytes)
		if err != nil {
			return nil, err
		}
		if chunked && len(art.Parts) > 0 {
			art.ID, streamed[id] = id, true
			out = append(out, art)
			continue
		}
		if i < len(res.Stored) && embedMax > 0 && f.SizeBytes <= embedMax {
			if data, err := calls.Read(ctx, s.Store, res.Stored[i], embedMax); err == nil {
				art.Parts = append(art.Parts, a2a.FilePart{File: a2a.FileBytes{FileMeta: meta, Bytes: base64.StdEncoding.EncodeToString(data)}})
			} else {
				s.Log.Warn("could not embed output", "id", res.Stored[i].ID, "err", err)
			}
		}
		out = append(out, art)
	}
	evs := make([]*a2a.TaskArtifactUpdateEvent, len(out))
	for i, art := range out {
		evs[i] = &a2a.TaskArtifactUpdateEvent{Artifact: art, Append: streamed[art.ID], LastChunk: true}
	}
	return evs, nil
}

// plainJSON returns m with every value as encoding/json decodes it (maps,
// slices, strings, float64, bool): a2a-go copies artifacts with gob, which
// knows no tool's own types (such as []transfer.File).
func plainJSON(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return map[string]any{"error": "structured content is not JSON: " + err.Error()}
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil
	}
	return out
}

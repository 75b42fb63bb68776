// Package fileagent is the smallest complete agentura agent, written to be
// copied: one tool that takes files (inspect_file) and one that produces
// several (archive_files). Everything about moving bytes — decoding inputs,
// storing outputs, signed URLs, cleanup — is agentcore's job; the tools only
// read local files and write local files.
//
// It also shows, once each, what MCP hosts expect beyond files (docs/mcp.md):
// inspect_file has a typed output (an outputSchema) and annotations;
// archive_files has schema-tag constraints with a default, reports progress
// per file (Call.Progress), logs to the client (Call.Log) and can show a
// picture it archives as an image (Output.ShowImage). Every produced file
// carries its sha256 and can be read back with resources/read. In hosts
// that support MCP Apps, archive_files' results show in agentura's file view
// and inspect_file's in a view of its own (view.go).
package fileagent

import (
	"archive/zip"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/filetype"
)

// Info names the agent.
var Info = agentcore.Info{
	Name:         "fileagent",
	Title:        "File example agent",
	Version:      "0.1.0",
	Instructions: "Refer to files by their names; the client sends the files themselves.",
}

// DefaultAddr is where the agent listens unless AGENT_ADDR says otherwise.
const DefaultAddr = ":8000"

// InspectInput are the arguments of inspect_file.
type InspectInput struct {
	Source agentcore.FileAttachment `json:"source" jsonschema:"the file to inspect"`
}

// InspectOutput is what inspect_file answers: its structured content,
// whose schema is the tool's outputSchema.
type InspectOutput struct {
	Name      string `json:"name" jsonschema:"the file's name"`
	MIMEType  string `json:"mime_type" jsonschema:"the type detected from content and name"`
	SizeBytes int64  `json:"size_bytes" jsonschema:"the file's length"`
	SHA256    string `json:"sha256" jsonschema:"hex SHA-256 digest of the content"`
}

// ArchiveInput are the arguments of archive_files.
type ArchiveInput struct {
	Sources []agentcore.FileAttachment `json:"sources" jsonschema:"the files to put into the archive" schema:"minItems=1;maxItems=100"`
	Name    string                     `json:"name,omitempty" jsonschema:"archive name without extension" schema:"default=bundle;maxLength=100;examples=bundle|scans-2024"`
	// ShowImages asks that pictures among the sources also be shown.
	ShowImages bool `json:"show_images,omitempty" jsonschema:"also show the archived pictures (up to 1 MiB each) in the chat"`
}

// Register adds the agent's tools to svc.
func Register(svc *agentcore.Service) error {
	if err := svc.AddView(inspectView()); err != nil {
		return err
	}
	agentcore.AddTypedTool(svc, agentcore.Tool{
		Name:        "inspect_file",
		Title:       "Inspect a file",
		Description: "Tell a file's type, size and SHA-256 digest.",
		ReadOnly:    true,
		OutputTypes: []string{}, // no files out
		Idempotent:  true,
		View:        InspectViewURI, // its own MCP Apps view (view.go)
	}, inspectFile)
	agentcore.AddTool(svc, agentcore.Tool{
		Name:        "archive_files",
		Description: "Pack files into a zip archive; also returns a SHA256SUMS listing beside it.",
	}, archiveFiles)
	return nil
}

func inspectFile(ctx context.Context, call *agentcore.Call, in InspectInput) (InspectOutput, *agentcore.Result, error) {
	f, err := call.ResolveFileAttachment(ctx, in.Source)
	if err != nil {
		return InspectOutput{}, nil, err
	}
	sum, err := digest(io.Discard, f.Path)
	if err != nil {
		return InspectOutput{}, nil, err
	}
	return InspectOutput{Name: f.Name, MIMEType: f.MIMEType, SizeBytes: f.Size, SHA256: sum},
		agentcore.TextResult(fmt.Sprintf("%s: %s, sha256 %s", f.Name, filetype.Describe(f.Name, f.MIMEType, f.Size), sum)), nil
}

// MaxArchiveItems is the most files one archive_files call packs; the
// archive's size is bounded by the call's input budget
// (AGENT_MAX_CALL_INPUT_BYTES), as a zip holds at most its inputs and a
// header per entry. A tool that turns many inputs into one output should
// bound both, or one small request makes a huge file.
const MaxArchiveItems = 100

func archiveFiles(ctx context.Context, call *agentcore.Call, in ArchiveInput) (*agentcore.Result, error) {
	if len(in.Sources) == 0 {
		return nil, errors.New("sources is empty: give at least one file")
	}
	if len(in.Sources) > MaxArchiveItems {
		return nil, fmt.Errorf("sources lists %d files; one archive takes at most %d: split them over several archives", len(in.Sources), MaxArchiveItems)
	}
	name := cmp.Or(agentcore.SanitizeName(in.Name), "bundle")
	dir, err := call.WorkDir()
	if err != nil {
		return nil, err
	}
	zipPath := filepath.Join(dir, name+".zip")
	out, err := os.Create(zipPath)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	var sums strings.Builder
	var shown []agentcore.Output
	taken := map[string]bool{}
	for i, src := range in.Sources {
		if err := ctx.Err(); err != nil { // cancelled, or stopped by the quota: write no more
			return nil, err
		}
		f, err := call.ResolveFileAttachment(ctx, src)
		if err != nil {
			return nil, err
		}
		entry := agentcore.UniqueName(f.Name, taken)
		sum, err := addToZip(zw, entry, f.Path)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", f.Name, err)
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, entry)
		call.Progress(float64(i+1), float64(len(in.Sources)), "archived "+entry)
		call.Log(slog.LevelInfo, "archived a file", "name", entry, "size_bytes", f.Size)
		if in.ShowImages && strings.HasPrefix(f.MIMEType, "image/") && f.Size <= agentcore.ImageMaxBytes {
			// An input: copied, not moved.
			shown = append(shown, agentcore.Output{Name: name + "/" + entry, Path: f.Path, ShowImage: true})
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := out.Close(); err != nil {
		return nil, err
	}
	res, err := call.FileResponse(ctx, append([]agentcore.Output{
		agentcore.OutputFile(name+".zip", zipPath),
		agentcore.OutputBytes(name+"/SHA256SUMS", []byte(sums.String())),
	}, shown...)...)
	if err != nil {
		return nil, err
	}
	res.Text = fmt.Sprintf("Archived %d file(s) into %s.zip.", len(in.Sources), name)
	return res, nil
}

// addToZip writes the file at path into zw as entry and returns its SHA-256,
// read in the same pass.
func addToZip(zw *zip.Writer, entry, path string) (string, error) {
	w, err := zw.Create(entry)
	if err != nil {
		return "", err
	}
	return digest(w, path)
}

// digest copies the file at path to w and returns its SHA-256.
func digest(w io.Writer, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(w, h), f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

package agentcore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/mcpbind"
	"github.com/agentura/agentura/filename"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/agentura/agentura/transfer"
)

// Output is a file a tool hands out. Give exactly one of Path and Reader.
type Output struct {
	// Name is the display name; it may hold a relative sub-path
	// ("images/diagram_002.png") for multi-file results.
	Name string
	// MIMEType is optional; by default it is detected from content and name.
	MIMEType string
	// Path is an existing local file. A file inside the call's WorkDir is
	// moved into the store (no copy on the same disk); any other is copied.
	Path string
	// Reader streams the content.
	Reader io.Reader
	// ShowImage asks that an image output also go out as an MCP image
	// content block, for hosts that show images in the chat; only for an
	// image type of at most ImageMaxBytes (else it is handed out as usual).
	ShowImage bool
}

// OutputFile hands out the local file at path under the display name name.
func OutputFile(name, path string) Output { return Output{Name: name, Path: path} }

// OutputBytes hands out data under the display name name.
func OutputBytes(name string, data []byte) Output {
	return Output{Name: name, Reader: bytes.NewReader(data)}
}

// OutputReader hands out what r yields under the display name name.
func OutputReader(name string, r io.Reader) Output { return Output{Name: name, Reader: r} }

// ImageMaxBytes is the largest image an output marked ShowImage sends as an
// MCP image content block; a larger one is handed out as a link only.
const ImageMaxBytes = mcpbind.ImageMaxBytes

// Result is what a tool returns, whatever the transport: MCP renders it as
// content blocks and structured content, A2A as artifacts.
type Result struct {
	// Text is shown first, to the model and the user.
	Text string
	// Data holds structured fields (never file bytes). With files, the file
	// fields are added: flat for one file, under "files" for several; the
	// keys download_url, filename, mime_type, size_bytes, sha256 and files are
	// therefore reserved and overwritten.
	Data map[string]any
	// Files are the produced files, in order. Fill it with Call.FileResponse.
	Files []transfer.File

	stored []fileserve.Meta // parallel to Files
	images []bool           // parallel to Files: Output.ShowImage
	links  [][]string       // parallel to Files: the URIs the transports offer
	meta   map[string]any   // the MCP result's _meta (attach_file's capability)
}

// outcome is r as the bindings render it.
func (r *Result) outcome() *calls.Result {
	return &calls.Result{Text: r.Text, Data: r.Data, Files: r.Files, Stored: r.stored, Images: r.images, Links: r.links, Meta: r.meta}
}

// TextResult is a result with text only.
func TextResult(text string) *Result { return &Result{Text: text} }

// Structured returns the structured content of r: Data plus the files.
func (r *Result) Structured() map[string]any { return r.outcome().Structured() }

// ProducedLines are the lines naming each produced file for a model that has
// no client middleware: "Tool produced: report.pptx (PowerPoint, 1.0 MB) <url>".
func (r *Result) ProducedLines() []string { return r.outcome().ProducedLines() }

// FileResponse stores outputs for the caller and returns the result that
// hands them out: per file a random id, an atomic write, metadata, and a
// signed download URL. The outputs are one commit: on error nothing of this
// response stays stored, and a crash of the process before the last output
// is stored leaves none of them once the agent starts again (see
// callfiles.Journal).
func (c *Call) FileResponse(ctx context.Context, outputs ...Output) (*Result, error) {
	if len(outputs) == 0 {
		return nil, errors.New("FileResponse: no outputs given")
	}
	// The outputs count as files from here on, not as a work folder.
	c.meter.End()
	journal := c.svc.calls.NewJournal(c.dir)
	defer journal.Done()
	res := &Result{}
	taken := map[string]bool{}
	for i, o := range outputs {
		name := UniqueName(cleanOutputName(o.Name, i), taken)
		meta, err := c.store(ctx, o, name, journal.Record)
		if err == nil {
			// A store that does not call Pending: journal it now.
			err = journal.Record(meta)
		}
		if err != nil {
			journal.Rollback(ctx)
			return nil, storeFailure(fmt.Sprintf("store output %q", name), err)
		}
		offer, err := c.svc.resolver.Handout(meta)
		if err != nil {
			journal.Rollback(ctx)
			return nil, fault.Of(fmt.Sprintf("sign the URL of %q", name), err)
		}
		res.stored = append(res.stored, meta)
		res.images = append(res.images, o.ShowImage)
		res.Files = append(res.Files, offer.File)
		res.links = append(res.links, offer.Links)
	}
	if err := journal.Commit(); err != nil {
		journal.Rollback(ctx)
		return nil, fault.Of("commit the outputs", err)
	}
	return res, nil
}

func (c *Call) store(ctx context.Context, o Output, name string, pending func(fileserve.Meta) error) (fileserve.Meta, error) {
	nf := fileserve.NewFile{Area: fileserve.Outputs, Owner: c.Owner, Name: name, MIMEType: o.MIMEType, Pending: pending}
	switch {
	case o.Path != "" && o.Reader != nil:
		return fileserve.Meta{}, &toolSideError{errors.New("give Path or Reader, not both")}
	case o.Path != "":
		if c.inWorkDir(o.Path) {
			m, err := c.svc.store.Adopt(ctx, nf, o.Path)
			if errors.Is(err, fs.ErrNotExist) {
				err = &toolSideError{err}
			}
			return m, err
		}
		f, err := os.Open(o.Path)
		if err != nil {
			return fileserve.Meta{}, &toolSideError{err}
		}
		defer f.Close()
		return c.svc.store.Put(ctx, nf, toolReader{f})
	case o.Reader != nil:
		return c.svc.store.Put(ctx, nf, toolReader{o.Reader})
	}
	return fileserve.Meta{}, &toolSideError{errors.New("output has neither Path nor Reader")}
}

// toolSideError is an output's failure on the tool's side (its reader, its
// file), which its caller reads as it is, unlike a failure of the store.
type toolSideError struct{ err error }

func (e *toolSideError) Error() string { return e.err.Error() }
func (e *toolSideError) Unwrap() error { return e.err }

// toolReader marks the errors of an output's reader as the tool's own.
type toolReader struct{ r io.Reader }

func (t toolReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		err = &toolSideError{err}
	}
	return n, err
}

// discard deletes outputs a response stored that nobody will take (the
// call was cancelled after FileResponse returned).
func (c *Call) discard(ctx context.Context, metas []fileserve.Meta) {
	for _, m := range metas {
		_ = c.svc.store.Delete(context.WithoutCancel(ctx), m.Area, m.Owner, m.ID)
	}
}

// inWorkDir reports whether p lies inside this call's WorkDir (not among
// its resolved inputs, which the tool may still be reading).
func (c *Call) inWorkDir(p string) bool {
	abs, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(filepath.Join(c.dir, "work"), abs)
	return err == nil && filepath.IsLocal(rel)
}

// cleanOutputName keeps a relative sub-path but makes every segment safe.
func cleanOutputName(name string, i int) string {
	if filename.Base(name) == "" {
		return fmt.Sprintf("output-%d", i+1)
	}
	return filename.Clean(name)
}

// UniqueName returns name, or name with " (2)", " (3)"... before the
// extension if taken has it already (filename.Numbered), and records the
// result in taken. Tools
// that pack several inputs into one output (an archive, say) use it so that
// two inputs of the same name both survive; FileResponse uses it for outputs.
func UniqueName(name string, taken map[string]bool) string {
	candidate := name
	for n := 2; taken[candidate]; n++ {
		candidate = filename.Numbered(name, n)
	}
	taken[candidate] = true
	return candidate
}

// storeFailure is the error of an output the store did not take: the
// tool's own failure (its reader, its file) and the caller's limits (quota,
// size) as they are, the store's failure as a fault (its cause in words; its
// details, which may name the store's address, in the log alone).
func storeFailure(what string, err error) error {
	_, toolSide := errors.AsType[*toolSideError](err)
	if toolSide || errors.Is(err, quota.ErrExceeded) || errors.Is(err, fileserve.ErrTooLarge) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fault.Of(what, err)
}

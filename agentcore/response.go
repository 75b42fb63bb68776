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
	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/agentura/agentura/transfer"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Output is a file a tool hands out. Give exactly one of Path and Reader.
type Output struct {
	Name      string    // display name; may hold a sub-path ("images/diagram_002.png")
	MIMEType  string    // optional: detected from content and name
	Path      string    // a local file: moved into the store from WorkDir, else copied
	Reader    io.Reader // the content, streamed
	ShowImage bool      // also send an image of at most ImageMaxBytes as an MCP image block
}

// OutputFile hands out the local file at path under the display name name.
func OutputFile(name, path string) Output { return Output{Name: name, Path: path} }

// OutputBytes hands out data under the display name name.
func OutputBytes(name string, data []byte) Output {
	return Output{Name: name, Reader: bytes.NewReader(data)}
}

// OutputReader hands out what r yields under the display name name.
func OutputReader(name string, r io.Reader) Output { return Output{Name: name, Reader: r} }

// ImageMaxBytes is the largest image ShowImage sends as an MCP image block.
const ImageMaxBytes = mcpbind.ImageMaxBytes

// Result is what a tool returns, whatever the transport renders it as.
type Result struct {
	Text  string          // shown first, to the model and the user
	Data  map[string]any  // structured fields, never bytes; the files' fields (download_url, ...) overwrite its keys
	Files []transfer.File // the produced files, in order: from Call.FileResponse

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

// ProducedLines name the produced files for a model without client middleware.
func (r *Result) ProducedLines() []string { return r.outcome().ProducedLines() }

// FileResponse stores outputs and returns the result that hands them out by
// signed URLs: one commit, all of them stored or none.
func (c *Call) FileResponse(ctx context.Context, outputs ...Output) (*Result, error) {
	ctx, span := otel.Tracer(tracerName).Start(ctx, "store outputs", trace.WithAttributes(attrOutputs.Int(len(outputs))))
	defer span.End()
	res, err := c.fileResponse(ctx, outputs...)
	if err != nil {
		span.SetStatus(codes.Error, "the outputs were not stored") // the error names files
		return nil, err
	}
	if span.IsRecording() {
		var total int64
		names := make([]string, 0, len(res.Files))
		for _, f := range res.Files {
			total += f.SizeBytes
			names = append(names, f.Filename)
		}
		span.SetAttributes(attrOutputBytes.Int64(total))
		if kv, ok := mcptrace.FileNamesAttr(names...); ok {
			span.SetAttributes(kv)
		}
	}
	return res, nil
}

// tracerName is the tracer of agentcore's spans; the span of a response's
// outputs records how many and their bytes, never a URL, and their names
// only when AGENT_TRACE_FILE_NAMES allows it.
const tracerName = "github.com/agentura/agentura/agentcore"

// TraceFileName is the span attribute naming a file (agentura.file.name,
// the name cleaned of folders and control characters), for an agent's own
// spans; ok is false, and the span must then name no file, unless
// AGENT_TRACE_FILE_NAMES allows file names in this process's spans.
func TraceFileName(name string) (kv attribute.KeyValue, ok bool) { return mcptrace.FileName(name) }

var (
	attrOutputs     = attribute.Key("agentura.outputs.count")
	attrOutputBytes = attribute.Key("agentura.outputs.size")
)

// fileResponse is FileResponse in its span.
func (c *Call) fileResponse(ctx context.Context, outputs ...Output) (*Result, error) {
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
		// A relative sub-path is kept, every segment made safe.
		name := filename.Clean(o.Name)
		if filename.Base(o.Name) == "" {
			name = fmt.Sprintf("output-%d", i+1)
		}
		name = UniqueName(name, taken)
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
	if err := calls.Fence(ctx); err != nil {
		journal.Rollback(ctx)
		return nil, fmt.Errorf("outputs not kept: %w", err)
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
		return c.svc.store.Put(ctx, nf, c.sent(name, toolReader{f}))
	case o.Reader != nil:
		return c.svc.store.Put(ctx, nf, c.sent(name, toolReader{o.Reader}))
	}
	return fileserve.Meta{}, &toolSideError{errors.New("output has neither Path nor Reader")}
}

// sent is r, whose bytes also go to the transport as the store reads
// them when it takes an output as it is written (calls.Hooks.Output: A2A
// chunks); a file moved in from WorkDir is whole already and is not sent so.
func (c *Call) sent(name string, r io.Reader) io.Reader {
	if c.hooks == nil || c.hooks.Output == nil {
		return r
	}
	return io.TeeReader(r, c.hooks.Output(name))
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

// UniqueName returns name, numbered if taken has it, and records it in taken.
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

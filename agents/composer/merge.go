package composer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/fault"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/filetype"
)

// MergeInput are the arguments of merge_pdfs.
type MergeInput struct {
	Sources  []agentcore.FileAttachment `json:"sources" jsonschema:"the PDFs to merge, in order"`
	Filename string                     `json:"filename,omitempty" jsonschema:"output file name without extension (default: merged)"`
}

func (c *composer) merge(ctx context.Context, call *agentcore.Call, in MergeInput) (*agentcore.Result, error) {
	if len(in.Sources) == 0 {
		return nil, errors.New("sources is empty: give the PDFs to merge, in order")
	}
	if len(in.Sources) > c.limits.Sources {
		return nil, fmt.Errorf("%d sources, more than the %d allowed in one merge: merge in steps", len(in.Sources), c.limits.Sources)
	}
	// Each source is parsed once: the parse that checks it is the one merged.
	conf := pdfcpuConfig()
	conf.Cmd = model.MERGECREATE
	conf.CreateBookmarks = false
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var dest *model.Context
	var total int64
	pages := 0
	for i, src := range in.Sources {
		f, err := call.ResolveFileAttachment(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("sources[%d]: %w", i, err)
		}
		if total += f.Size; total > c.limits.SourceBytes {
			return nil, fmt.Errorf("the sources are larger than the %s allowed together: merge in steps", filetype.Size(c.limits.SourceBytes))
		}
		if !strings.HasPrefix(f.MIMEType, "application/pdf") {
			return nil, fmt.Errorf("sources[%d] %q is %s (%s), not a PDF: merge_pdfs takes PDF files only (compose_document makes PDFs from Markdown)",
				i, f.Name, filetype.Label(f.MIMEType), f.MIMEType)
		}
		fh, err := os.Open(f.Path)
		if err != nil {
			return nil, fmt.Errorf("sources[%d] %q: %w", i, f.Name, err)
		}
		files = append(files, fh)
		pdf, err := api.ReadAndValidate(fh, conf)
		if err != nil {
			return nil, fmt.Errorf("sources[%d] %q is not a readable PDF (%v): send an intact, unencrypted PDF", i, f.Name, err)
		}
		pages += pdf.PageCount
		if dest == nil {
			dest = pdf
			dest.EnsureVersionForWriting()
		} else if err := appendPDF(dest, pdf, f.Name); err != nil {
			return nil, fmt.Errorf("sources[%d] %q: %w", i, f.Name, err)
		}
		// One step a source, one for writing the result.
		call.Progress(float64(i+1), float64(len(in.Sources)+1), fmt.Sprintf("%d of %d PDFs merged", i+1, len(in.Sources)))
	}
	dir, err := call.WorkDir()
	if err != nil {
		return nil, err
	}
	name := outputName(in.Filename, "merged", "pdf")
	path := filepath.Join(dir, "out-"+name)
	if err := writeFile(path, func(w io.Writer) error { return writeMerged(dest, w) }); err != nil {
		return nil, err
	}
	res, err := call.FileResponse(ctx, agentcore.OutputFile(name, path))
	if err != nil {
		return nil, err
	}
	call.Progress(float64(len(in.Sources)+1), float64(len(in.Sources)+1), name+" written")
	res.Text = fmt.Sprintf("Merged %d PDF(s), %d page(s), into %s.", len(in.Sources), pages, name)
	res.Data = map[string]any{"pages": pages, "sources": len(in.Sources)}
	return res, nil
}

// appendPDF appends the pages of src to dest, as pdfcpu's api.MergeRaw
// does (which would parse every source a second time).
func appendPDF(dest, src *model.Context, name string) (err error) {
	defer fault.Catch(&err)
	if dest.XRefTable.Version() < model.V20 && src.XRefTable.Version() == model.V20 {
		return fmt.Errorf("a PDF 2.0 cannot be merged after an older PDF: put it first, or save it as an older PDF: %w", pdfcpu.ErrUnsupportedVersion)
	}
	if err := pdfcpu.MergeXRefTables(name, src, dest, false, false); err != nil {
		return fmt.Errorf("merge PDFs: %w", err)
	}
	return nil
}

// writeMerged writes the merged PDF to w.
func writeMerged(pdf *model.Context, w io.Writer) error {
	if pdf.Configuration.OptimizeBeforeWriting {
		if err := api.OptimizeContext(pdf); err != nil {
			return fmt.Errorf("merge PDFs: %w", err)
		}
	}
	if err := api.WriteContext(pdf, w); err != nil {
		return fmt.Errorf("merge PDFs: %w", err)
	}
	return nil
}

// pdfcpuConfig is pdfcpu's default configuration, relaxed validation:
// PDFs found in the wild bend the standard.
func pdfcpuConfig() *model.Configuration {
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	return conf
}

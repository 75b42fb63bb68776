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
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var readers []io.ReadSeeker
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
		n, err := api.PageCount(fh, pdfcpuConfig())
		if err != nil {
			return nil, fmt.Errorf("sources[%d] %q is not a readable PDF (%v): send an intact, unencrypted PDF", i, f.Name, err)
		}
		if _, err := fh.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		pages += n
		readers = append(readers, fh)
	}
	dir, err := call.WorkDir()
	if err != nil {
		return nil, err
	}
	name := outputName(in.Filename, "merged", "pdf")
	path := filepath.Join(dir, "out-"+name)
	if err := writeFile(path, func(w io.Writer) error { return mergePDFs(readers, w) }); err != nil {
		return nil, err
	}
	res, err := call.FileResponse(ctx, agentcore.OutputFile(name, path))
	if err != nil {
		return nil, err
	}
	res.Text = fmt.Sprintf("Merged %d PDF(s), %d page(s), into %s.", len(readers), pages, name)
	res.Data = map[string]any{"pages": pages, "sources": len(readers)}
	return res, nil
}

// mergePDFs writes the PDFs of rs, in order, as one PDF to w.
func mergePDFs(rs []io.ReadSeeker, w io.Writer) error {
	if err := api.MergeRaw(rs, w, false, pdfcpuConfig()); err != nil {
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

package ocr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentura/agentura/agentcore"
)

// batchItem is the outcome of one source of ocr_batch.
type batchItem struct {
	doc *document
	err error
}

// ocrBatch reads each source as ocr_document does, Concurrency sources at a
// time. A source that fails has its error in its own entry; the call fails
// only when every source failed, or the outputs cannot be stored.
func (a *Agent) ocrBatch(ctx context.Context, call *agentcore.Call, in BatchInput) (*agentcore.Result, error) {
	switch {
	case len(in.Sources) == 0:
		return nil, errors.New("sources is empty: give at least one file")
	case len(in.Sources) > MaxBatch:
		return nil, fmt.Errorf("%d sources, more than the %d one call takes: split them into several calls", len(in.Sources), MaxBatch)
	}
	req, err := a.request(ctx, in.Languages, in.Outputs)
	if err != nil {
		return nil, err
	}

	items := make([]batchItem, len(in.Sources))
	var wg sync.WaitGroup
	var finished atomic.Int64
	limit := make(chan struct{}, a.cfg.Concurrency)
	for i, src := range in.Sources {
		wg.Go(func() {
			select {
			case limit <- struct{}{}:
				defer func() { <-limit }()
			case <-ctx.Done():
				items[i] = batchItem{err: context.Cause(ctx)}
				return
			}
			doc, err := a.read(ctx, call, src, req)
			items[i] = batchItem{doc: doc, err: err}
			n := finished.Add(1)
			call.Progress(float64(n), float64(len(in.Sources)), fmt.Sprintf("%d of %d documents read", n, len(in.Sources)))
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ocr_batch stopped: %w", context.Cause(ctx))
	}

	// Every output under its own name: two sources called scan.png give
	// scan.ocr.pdf and scan (2).ocr.pdf.
	var outputs []agentcore.Output
	taken := map[string]bool{}
	var failed []error
	for i, it := range items {
		if it.err != nil {
			failed = append(failed, fmt.Errorf("source %d: %w", i+1, it.err))
			continue
		}
		for j, f := range it.doc.Files {
			it.doc.Files[j].Name = agentcore.UniqueName(f.Name, taken)
			outputs = append(outputs, it.doc.Files[j])
		}
	}
	if len(failed) == len(items) {
		return nil, fmt.Errorf("no source could be read: %w", errors.Join(failed...))
	}
	res := &agentcore.Result{}
	if len(outputs) > 0 {
		if res, err = call.FileResponse(ctx, outputs...); err != nil {
			return nil, err
		}
	}

	results := make([]map[string]any, len(items))
	var text []string
	stored := 0
	for i, it := range items {
		if it.err != nil {
			results[i] = map[string]any{"index": i + 1, "error": it.err.Error()}
			text = append(text, fmt.Sprintf("Source %d failed: %v", i+1, it.err))
			continue
		}
		r := it.doc.data()
		r["index"] = i + 1
		names := make([]string, len(it.doc.Files))
		for j := range it.doc.Files {
			names[j] = res.Files[stored].Filename
			stored++
		}
		r["outputs"] = names
		r["languages"] = it.doc.Languages
		results[i] = r
		text = append(text, it.doc.text())
	}
	res.Text = fmt.Sprintf("Read %d of %d sources.\n\n", len(items)-len(failed), len(items)) + strings.Join(text, "\n\n")
	res.Data = map[string]any{
		"results":   results,
		"succeeded": len(items) - len(failed),
		"failed":    len(failed),
		"languages": req.Languages,
	}
	return res, nil
}

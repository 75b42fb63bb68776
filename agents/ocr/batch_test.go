package ocr_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// batchResult is one entry of ocr_batch's structured results.
type batchResult struct {
	Index   int        `json:"index"`
	Source  string     `json:"source"`
	Error   string     `json:"error"`
	Pages   []ocr.Page `json:"pages"`
	Outputs []string   `json:"outputs"`
}

// TestBatch reads good and bad files in one call: each gets its own result
// or its own error, in the order given, and outputs of files of the same
// name do not overwrite each other.
func TestBatch(t *testing.T) {
	svc, _ := newService(t, ocr.Config{Concurrency: 2})
	png := ocrtest.PNG(t, ocrtest.Render(t, sampleLines...))
	pdf := ocrtest.PDF(t, []string{"First page delta"}, []string{"Second page echo"})
	res, err := invoke(t, svc, "ocr_batch", map[string]any{
		"sources": []any{
			attachment("scan.png", png),
			attachment("notes.txt", []byte("not a scan at all, only a line of plain text\n")),
			attachment("letter.pdf", pdf),
			"data:image/png;name=scan.png;base64," + attachment("", png)["content"].(string),
		},
		"outputs": []string{"tsv"},
	})
	if err != nil {
		t.Fatalf("ocr_batch: %v", err)
	}
	data := res.Structured()
	if data["succeeded"] != 3 || data["failed"] != 1 {
		t.Errorf("succeeded %v, failed %v; want 3 and 1", data["succeeded"], data["failed"])
	}
	var results []batchResult
	raw, _ := json.Marshal(data["results"])
	if err := json.Unmarshal(raw, &results); err != nil || len(results) != 4 {
		t.Fatalf("results %s: %v; want 4 entries", raw, err)
	}
	for i, r := range results {
		if r.Index != i+1 {
			t.Errorf("results[%d].index = %d", i, r.Index)
		}
	}

	if r := results[1]; r.Error == "" || !strings.Contains(r.Error, "notes.txt") || !strings.Contains(r.Error, "not an image or a PDF") {
		t.Errorf("the text file's entry = %+v; want its own error naming it", r)
	}
	for _, i := range []int{0, 3} {
		if r := results[i]; r.Error != "" || r.Source != "scan.png" || len(r.Pages) != 1 {
			t.Errorf("results[%d] = %+v; want scan.png, one page, no error", i, r)
		} else {
			wantWords(t, "scan.png", r.Pages[0].Text, sampleWords...)
		}
	}
	if r := results[2]; r.Error != "" || len(r.Pages) != 2 {
		t.Errorf("letter.pdf = %+v; want two pages", r)
	} else {
		wantWords(t, "letter.pdf page 1", r.Pages[0].Text, "first", "delta")
		wantWords(t, "letter.pdf page 2", r.Pages[1].Text, "second", "echo")
	}

	// Each output under its own name, listed in its own entry.
	if !slices.Equal(results[0].Outputs, []string{"scan.tsv"}) || !slices.Equal(results[2].Outputs, []string{"letter.tsv"}) ||
		!slices.Equal(results[3].Outputs, []string{"scan (2).tsv"}) {
		t.Errorf("outputs %v, %v, %v; want scan.tsv, letter.tsv, scan (2).tsv", results[0].Outputs, results[2].Outputs, results[3].Outputs)
	}
	var names []string
	for _, f := range res.Files {
		names = append(names, f.Filename)
		if !strings.Contains(string(mcptest.Download(t, f.DownloadURL)), "\t") {
			t.Errorf("%s is not TSV", f.Filename)
		}
	}
	if !slices.Equal(names, []string{"scan.tsv", "letter.tsv", "scan (2).tsv"}) {
		t.Errorf("files %v; want scan.tsv, letter.tsv, scan (2).tsv", names)
	}
	wantWords(t, "text content", res.Text, "Read 3 of 4 sources", "quick", "Source 2 failed", "notes.txt", "delta", "echo", "quick")
}

// TestBatchAllFail: when no source can be read, the call itself fails and
// says why for each.
func TestBatchAllFail(t *testing.T) {
	svc, _ := newService(t, ocr.Config{})
	_, err := invoke(t, svc, "ocr_batch", map[string]any{"sources": []any{
		attachment("a.txt", []byte("plain text, one line of it, and nothing else\n")),
		attachment("b.png", ocrtest.PNGHeader(100000, 100000)),
	}})
	if err == nil {
		t.Fatal("ocr_batch succeeded; want an error")
	}
	for _, w := range []string{"no source could be read", "source 1: a.txt", "not an image", "source 2: b.png", "32767"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	_, err = svc.Invoke(context.Background(), "ocr_batch", "", json.RawMessage(`{"sources": []}`))
	if err == nil || !strings.Contains(err.Error(), "at least one file") {
		t.Errorf("empty sources: %v; want an error asking for a file", err)
	}
}

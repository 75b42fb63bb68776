package ocr_test

// End-to-end test of ocr-agent: the real binary (cmd/ocr-agent) on a real port, driven by an
// independent MCP client (mark3labs/mcp-go) over streamable HTTP; produced
// files are downloaded over plain HTTP and read back (pdftotext).

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// agentBin is the ocr-agent binary built by TestMain.
var agentBin string

func TestMain(m *testing.M) {
	os.Exit(mcptest.Main(m, "ocr-agent-e2e", func(dir string) (err error) {
		// With -race when the tests are: a data race in the agent then fails its exit status.
		agentBin, err = mcptest.Build(dir, "../../cmd/ocr-agent", mcptest.RaceEnabled())
		return err
	}))
}

// documentOutput is ocr_document's structured content, as the contract
// (docs/contract.md) describes it.
type documentOutput struct {
	Source    string   `json:"source"`
	PageCount int      `json:"page_count"`
	Text      string   `json:"text"`
	Languages []string `json:"languages"`
	Pages     []struct {
		Page int    `json:"page"`
		Text string `json:"text"`
	} `json:"pages"`
	Files []mcptest.File `json:"files"`
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestHTTP drives the agent as an MCP host would.
func TestE2EHTTP(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo", "pdftotext")
	a := mcptest.StartAgent(t, agentBin)
	c, init := mcptest.Connect(t, a.URL+"/mcp")
	if init.ServerInfo.Name != "ocr-agent" {
		t.Errorf("server %q, want ocr-agent", init.ServerInfo.Name)
	}

	img := ocrtest.Render(t, sampleLines...)
	words := sampleWords

	t.Run("ListTools", func(t *testing.T) {
		props := map[string]map[string]any{}
		for _, tool := range mcptest.ListTools(t, c) {
			raw, _ := json.Marshal(tool.InputSchema)
			var s struct {
				Properties map[string]any `json:"properties"`
			}
			json.Unmarshal(raw, &s)
			props[tool.Name] = s.Properties
		}
		source, _ := props["ocr_document"]["source"].(map[string]any)
		sources, _ := props["ocr_batch"]["sources"].(map[string]any)
		if source["x-file"] != true || sources["x-file"] != true || sources["type"] != "array" {
			t.Errorf("file parameters not marked x-file: source %v, sources %v", source, sources)
		}
		outputs, _ := json.Marshal(props["ocr_document"]["outputs"])
		if !strings.Contains(string(outputs), `"searchable_pdf","hocr","tsv"`) {
			t.Errorf("outputs schema %s does not list searchable_pdf, hocr, tsv", outputs)
		}
	})

	t.Run("ObjectBase64WithOutputs", func(t *testing.T) {
		res := mcptest.CallTool(t, c, "ocr_document", map[string]any{
			"source":  map[string]any{"name": "scan.png", "content": b64(ocrtest.PNG(t, img))},
			"outputs": []string{"searchable_pdf", "hocr"},
		})
		mcptest.MustSucceed(t, "ocr_document", res)
		wantWords(t, "text content", mcptest.Text(res), words...)
		out := mcptest.Structured[documentOutput](t, res)
		if out.Source != "scan.png" || out.PageCount != 1 || len(out.Pages) != 1 || out.Pages[0].Page != 1 {
			t.Errorf("structured = %+v; want scan.png, one page numbered 1", out)
		}
		if len(out.Files) != 2 || out.Files[0].Filename != "scan.ocr.pdf" || out.Files[1].Filename != "scan.hocr" {
			t.Fatalf("files %+v; want scan.ocr.pdf and scan.hocr", out.Files)
		}
		if !strings.Contains(mcptest.Text(res), "Tool produced: scan.ocr.pdf (PDF") {
			t.Errorf("no \"Tool produced\" line for the PDF in %q", mcptest.Text(res))
		}
		pdf := mcptest.Download(t, out.Files[0].DownloadURL)
		if int64(len(pdf)) != out.Files[0].SizeBytes {
			t.Errorf("downloaded %d bytes, size_bytes says %d", len(pdf), out.Files[0].SizeBytes)
		}
		wantWords(t, "searchable PDF text layer", ocrtest.PDFText(t, pdf), words...)
		wantWords(t, "hOCR", string(mcptest.Download(t, out.Files[1].DownloadURL)), "ocr_page", "quick", "dog")
	})

	t.Run("PlainStringDataURI", func(t *testing.T) {
		res := mcptest.CallTool(t, c, "ocr_document", map[string]any{
			"source": "data:image/jpeg;name=photo.jpg;base64," + b64(ocrtest.JPEG(t, img)),
		})
		mcptest.MustSucceed(t, "ocr_document", res)
		if out := mcptest.Structured[documentOutput](t, res); out.Source != "photo.jpg" {
			t.Errorf("source = %q, want photo.jpg (from the data URI's name)", out.Source)
		}
		wantWords(t, "text content", mcptest.Text(res), words...)
	})

	t.Run("ObjectDataURIPDF", func(t *testing.T) {
		pdf := ocrtest.PDF(t, []string{"First page alpha"}, []string{"Second page bravo"})
		res := mcptest.CallTool(t, c, "ocr_document", map[string]any{
			"source":  map[string]any{"name": "letter.pdf", "content": "data:application/pdf;base64," + b64(pdf)},
			"outputs": []string{"searchable_pdf"},
		})
		mcptest.MustSucceed(t, "ocr_document", res)
		out := mcptest.Structured[documentOutput](t, res)
		if len(out.Pages) != 2 {
			t.Fatalf("%d pages, want 2", len(out.Pages))
		}
		wantWords(t, "page 1", out.Pages[0].Text, "first", "alpha")
		wantWords(t, "page 2", out.Pages[1].Text, "second", "bravo")
		// One file: flat in the structured content.
		flat := mcptest.Structured[mcptest.File](t, res)
		if flat.Filename != "letter.ocr.pdf" || flat.SizeBytes <= 0 || flat.DownloadURL == "" {
			t.Fatalf("structured file %+v, want letter.ocr.pdf with its size and URL", flat)
		}
		layer := strings.Split(strings.TrimRight(ocrtest.PDFText(t, mcptest.Download(t, flat.DownloadURL)), "\f\n"), "\f")
		if len(layer) != 2 {
			t.Fatalf("searchable PDF has %d pages of text, want 2", len(layer))
		}
		wantWords(t, "text layer page 1", layer[0], "alpha")
		wantWords(t, "text layer page 2", layer[1], "bravo")
	})

	t.Run("Batch", func(t *testing.T) {
		res := mcptest.CallTool(t, c, "ocr_batch", map[string]any{"sources": []any{
			map[string]any{"name": "fax.tiff", "content": b64(ocrtest.TIFF(t, img))},
			"data:text/plain;name=notes.txt;base64," + b64([]byte("just some notes")), // the plain-string form in an array
		}})
		mcptest.MustSucceed(t, "ocr_batch", res)
		out := mcptest.Structured[struct {
			Succeeded int `json:"succeeded"`
			Failed    int `json:"failed"`
			Results   []struct {
				Source string `json:"source"`
				Text   string `json:"text"`
				Error  string `json:"error"`
			} `json:"results"`
		}](t, res)
		if out.Succeeded != 1 || out.Failed != 1 || len(out.Results) != 2 {
			t.Fatalf("batch = %+v; want one success, one failure", out)
		}
		wantWords(t, "fax.tiff", out.Results[0].Text, words...)
		if !strings.Contains(out.Results[1].Error, "notes.txt") || !strings.Contains(out.Results[1].Error, "not an image or a PDF") {
			t.Errorf("notes.txt error %q; want it named and explained", out.Results[1].Error)
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		res := mcptest.CallTool(t, c, "ocr_document", map[string]any{
			"source": map[string]any{"name": "scan.png", "content": b64(ocrtest.PNG(t, img))}, "languages": []string{"klingon"},
		})
		if !res.IsError || !strings.Contains(mcptest.Text(res), `"klingon" is not installed`) || !strings.Contains(mcptest.Text(res), "installed: ") || !strings.Contains(mcptest.Text(res), "eng") {
			t.Errorf("isError %v, %q; want a tool error listing the installed languages", res.IsError, mcptest.Text(res))
		}
	})

	if err := c.Close(); err != nil {
		t.Errorf("close client: %v", err)
	}
	a.Stop(t)
}

// TestReadyzWithoutEngine starts the agent where neither tesseract nor
// pdftoppm can be found: it serves, but /readyz says what to install.
func TestE2EReadyzWithoutEngine(t *testing.T) {
	a := mcptest.NewAgent(t, agentBin, "PATH="+t.TempDir())
	a.Start(t)
	a.WaitFor(t, "/healthz", http.StatusOK)
	body := a.WaitFor(t, "/readyz", http.StatusServiceUnavailable)
	for _, w := range []string{"tesseract", "tesseract-ocr", "pdftoppm", "poppler-utils"} {
		if !strings.Contains(body, w) {
			t.Errorf("/readyz body %s does not say %q", body, w)
		}
	}
	a.Stop(t)
}

// TestE2EAttachTool: the shipped agent offers attach_file and its upload
// view (drag-and-drop) by default, and AGENT_ATTACH_TOOL=false leaves them
// out. Neither needs tesseract.
func TestE2EAttachTool(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want bool
	}{{nil, true}, {[]string{"AGENT_ATTACH_TOOL=false"}, false}} {
		a := mcptest.NewAgent(t, agentBin, tc.env...)
		a.Start(t)
		a.WaitFor(t, "/healthz", http.StatusOK)
		c, _ := mcptest.Connect(t, a.URL+"/mcp")
		mcptest.CheckAttachTool(t, c, tc.want)
		c.Close()
		a.Stop(t)
	}
}

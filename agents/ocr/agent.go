package ocr

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/agentura/agentura/agentcore"
)

// Info names the agent.
var Info = agentcore.Info{
	Name:    "ocr-agent",
	Title:   "OCR agent",
	Version: "0.1.0",
	Instructions: "Reads the text in scans, photos of documents and PDFs with tesseract. " +
		"Refer to files by their names; the client sends the files themselves. " +
		"Ask for a searchable_pdf to get the document back with a selectable text layer.",
}

// DefaultAddr is where the agent listens unless AGENT_ADDR says otherwise.
const DefaultAddr = ":8001"

// DocumentInput are the arguments of ocr_document.
type DocumentInput struct {
	Source    agentcore.FileAttachment `json:"source" jsonschema:"the scan or document to read: PNG, JPEG, TIFF or PDF"`
	Languages []string                 `json:"languages,omitempty" jsonschema:"tesseract language codes of the text, most likely first, e.g. [\"eng\", \"deu\"] (default [\"eng\"]); [\"auto\"] detects the script on the first page and reads in its installed languages"`
	Outputs   []string                 `json:"outputs,omitempty" enum:"searchable_pdf,hocr,tsv" jsonschema:"files to produce beside the text: searchable_pdf (the pages with a text layer), hocr (words and boxes, XHTML), tsv (words, boxes, confidences)"`
}

// BatchInput are the arguments of ocr_batch.
type BatchInput struct {
	Sources   []agentcore.FileAttachment `json:"sources" jsonschema:"the scans or documents to read: PNG, JPEG, TIFF or PDF"`
	Languages []string                   `json:"languages,omitempty" jsonschema:"tesseract language codes, as for ocr_document; the same for every file"`
	Outputs   []string                   `json:"outputs,omitempty" enum:"searchable_pdf,hocr,tsv" jsonschema:"files to produce for each source, as for ocr_document"`
}

// MaxBatch is the most sources one ocr_batch call takes.
const MaxBatch = 100

// Agent is the OCR agent: its settings and the engine that runs tesseract.
type Agent struct {
	cfg    Config
	engine *engine
}

// New returns an agent with the settings of cfg (zero fields take their
// defaults).
func New(cfg Config) *Agent {
	cfg = cfg.withDefaults()
	return &Agent{cfg: cfg, engine: newEngine(cfg)}
}

// Register reads the agent's settings from the environment (see LoadConfig)
// and adds its tools and readiness checks to svc. cmd/ocr-agent instead
// hands Config.Settings to agentcore.Main (WithSettings), which gives the
// settings flags too.
func Register(svc *agentcore.Service) error {
	cfg, err := LoadConfig(os.LookupEnv)
	if err != nil {
		return fmt.Errorf("bad configuration: %w", err)
	}
	return New(cfg).Register(svc)
}

// Register adds the tools ocr_document, ocr_batch and attach_file (the
// upload view; AGENT_ATTACH_TOOL) to svc, readiness
// checks that fail while tesseract or pdftoppm is missing, and the agent's
// metrics (agentura_ocr_*). An agent is registered on one service.
func (a *Agent) Register(svc *agentcore.Service) error {
	if err := a.engine.metrics.register(svc.Registry()); err != nil {
		return err
	}
	inputs := []string{"image/png", "image/jpeg", "image/tiff", "application/pdf"}
	outputs := []string{"application/pdf", "text/vnd.hocr+html", "text/tab-separated-values"}
	agentcore.AddTool(svc, agentcore.Tool{
		Name:  "ocr_document",
		Title: "Read the text of a scan or PDF",
		Description: "Recognise the text in one scan, photo or PDF (PNG, JPEG, TIFF or PDF; PDF pages are rendered at 300 dpi). " +
			"Returns the text page by page, and on request a searchable PDF, hOCR or TSV file.",
		ReadOnly:    true,
		InputTypes:  inputs,
		OutputTypes: outputs,
		// A PDF of many pages takes minutes: a task for a client that
		// supports them (a scan done within a second is answered at once).
		Long: true,
	}, a.ocrDocument)
	agentcore.AddTool(svc, agentcore.Tool{
		Name:  "ocr_batch",
		Title: "Read the text of several scans or PDFs",
		Description: fmt.Sprintf("Recognise the text in several files at once (up to %d), in parallel. "+
			"Each file gets its own result, or its own error: one bad file does not fail the others.", MaxBatch),
		ReadOnly:    true,
		InputTypes:  inputs,
		OutputTypes: outputs,
		Long:        true,
	}, a.ocrBatch)
	svc.AddReadinessCheck("tesseract", a.checkTesseract)
	svc.AddReadinessCheck("pdftoppm", a.checkPoppler)
	// The upload view, so that a user can give the agent scans by
	// drag-and-drop (AGENT_ATTACH_TOOL=false leaves it out).
	return svc.AddAttachTool()
}

// checkTesseract passes when tesseract runs and has a language pack.
func (a *Agent) checkTesseract(ctx context.Context) error {
	langs, _, err := a.engine.dataFiles(ctx)
	if err != nil {
		return err
	}
	if len(langs) == 0 {
		return fmt.Errorf("tesseract has no language pack; install one (Debian/Ubuntu: apt-get install %s)", debianPackage(DefaultLanguage))
	}
	return nil
}

// checkPoppler passes when pdftoppm and pdfinfo run.
func (a *Agent) checkPoppler(ctx context.Context) error {
	var errs []error
	for _, cmd := range []string{a.cfg.PDFToPPM, a.cfg.PDFInfo} {
		if _, err := a.engine.run(ctx, cmd, "-v"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// request checks the languages and outputs a call asks for.
func (a *Agent) request(ctx context.Context, languages, outputs []string) (request, error) {
	langs, err := a.engine.langs.check(ctx, languages)
	if err != nil {
		return request{}, err
	}
	var outs []string
	for _, o := range outputs {
		if _, ok := formats[o]; !ok {
			return request{}, fmt.Errorf("unknown output %q: choose from %s, %s and %s", o, OutputSearchablePDF, OutputHOCR, OutputTSV)
		}
		if !slices.Contains(outs, o) {
			outs = append(outs, o)
		}
	}
	return request{Languages: langs, Outputs: outs}, nil
}

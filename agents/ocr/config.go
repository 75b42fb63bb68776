package ocr

import (
	"cmp"
	"runtime"
	"time"

	"github.com/agentura/agentura/settings"
)

// Defaults of the settings.
const (
	DefaultMaxPages  = 50
	DefaultMaxPixels = 64_000_000 // per page: about an A2 page at 400 dpi
	DefaultTimeout   = 10 * time.Minute
	// DPI is the resolution PDF pages are rasterised at, the one tesseract
	// reads best.
	DPI = 300
	// maxSide is the widest or tallest image tesseract reads.
	maxSide = 32767
)

// Config holds the agent's own settings; Settings declares their variables
// (AGENT_OCR_*), flags and defaults. Zero fields take the defaults.
type Config struct {
	// MaxPages is the most pages of one PDF or TIFF (AGENT_OCR_MAX_PAGES).
	MaxPages int
	// MaxPixels is the most pixels of one page, read from the image header or
	// computed from the PDF page size at DPI, before anything is decoded
	// (AGENT_OCR_MAX_PIXELS).
	MaxPixels int64
	// Concurrency is the most tesseract and pdftoppm processes running at
	// once, across all calls; ocr_batch works on as many files at a time
	// (AGENT_OCR_CONCURRENCY; default: the number of CPUs).
	Concurrency int
	// Timeout bounds the work on one document, rasterising included
	// (AGENT_OCR_TIMEOUT).
	Timeout time.Duration
	// Tesseract, PDFToPPM and PDFInfo are the commands run, looked up in
	// PATH unless they hold a slash.
	Tesseract, PDFToPPM, PDFInfo string
}

// Settings declares the agent's own settings, each bound to its field of c:
// give them to agentcore.Main with agentcore.WithSettings, which reads them
// from the environment and from their flags (--ocr-max-pages, ...).
func (c *Config) Settings() settings.List {
	return settings.List{
		settings.Int(&c.MaxPages, "AGENT_OCR_MAX_PAGES", DefaultMaxPages, "most pages of one PDF or TIFF").Positive(),
		settings.Int64(&c.MaxPixels, "AGENT_OCR_MAX_PIXELS", DefaultMaxPixels,
			"most pixels of one page (from the header; PDF pages at 300 dpi), each side at most 32767").Positive(),
		settings.Int(&c.Concurrency, "AGENT_OCR_CONCURRENCY", runtime.NumCPU(),
			"tesseract/pdftoppm processes at once; also ocr_batch's parallelism").Positive().Shown("number of CPUs"),
		settings.Duration(&c.Timeout, "AGENT_OCR_TIMEOUT", DefaultTimeout, "time for one document, rasterising included"),
	}
}

// withDefaults returns c with zero (or negative) fields set to their
// defaults, and the counts bounded.
func (c Config) withDefaults() Config {
	c.MaxPages, c.MaxPixels, c.Concurrency, c.Timeout = max(c.MaxPages, 0), max(c.MaxPixels, 0), max(c.Concurrency, 0), max(c.Timeout, 0)
	c.Settings().Defaults()
	c.MaxPages = min(c.MaxPages, 1<<20)
	c.Concurrency = min(c.Concurrency, 1024)
	c.Tesseract = cmp.Or(c.Tesseract, "tesseract")
	c.PDFToPPM = cmp.Or(c.PDFToPPM, "pdftoppm")
	c.PDFInfo = cmp.Or(c.PDFInfo, "pdfinfo")
	return c
}

// LoadConfig reads the agent's own settings (see Settings) through lookup
// (os.LookupEnv in a program). A bad value is an *agentcore.ConfigError
// naming the variable.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	var c Config
	err := c.Settings().Load(lookup)
	return c.withDefaults(), err
}

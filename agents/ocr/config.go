package ocr

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/agentura/agentura/agentcore"
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

// Config holds the agent's own settings. LoadConfig fills it from the
// AGENT_OCR_* environment variables; zero fields take the defaults.
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

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.MaxPages <= 0 {
		c.MaxPages = DefaultMaxPages
	}
	if c.MaxPixels <= 0 {
		c.MaxPixels = DefaultMaxPixels
	}
	if c.Concurrency <= 0 {
		c.Concurrency = runtime.NumCPU()
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Tesseract == "" {
		c.Tesseract = "tesseract"
	}
	if c.PDFToPPM == "" {
		c.PDFToPPM = "pdftoppm"
	}
	if c.PDFInfo == "" {
		c.PDFInfo = "pdfinfo"
	}
	return c
}

// LoadConfig reads AGENT_OCR_MAX_PAGES, AGENT_OCR_MAX_PIXELS,
// AGENT_OCR_CONCURRENCY and AGENT_OCR_TIMEOUT through lookup (os.LookupEnv in
// a program). A bad value is an *agentcore.ConfigError naming the variable.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	var c Config
	var errs []error
	positive := func(name string, set func(int64)) {
		v, ok := lookup(name)
		if !ok || v == "" {
			return
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			errs = append(errs, &agentcore.ConfigError{Var: name, Value: v, Err: errors.New("must be a positive whole number")})
			return
		}
		set(n)
	}
	positive("AGENT_OCR_MAX_PAGES", func(n int64) { c.MaxPages = int(min(n, 1<<20)) })
	positive("AGENT_OCR_MAX_PIXELS", func(n int64) { c.MaxPixels = n })
	positive("AGENT_OCR_CONCURRENCY", func(n int64) { c.Concurrency = int(min(n, 1024)) })
	if v, ok := lookup("AGENT_OCR_TIMEOUT"); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = errors.New("must be positive")
		}
		if err != nil {
			errs = append(errs, &agentcore.ConfigError{Var: "AGENT_OCR_TIMEOUT", Value: v,
				Err: fmt.Errorf("%w: give a duration such as 10m or 90s", err)})
		} else {
			c.Timeout = d
		}
	}
	return c.withDefaults(), errors.Join(errs...)
}

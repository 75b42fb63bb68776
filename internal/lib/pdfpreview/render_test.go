package pdfpreview

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/lib/pdfpreview/pdftest"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

func opener(b []byte, opened *int) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		*opened++
		return io.NopCloser(bytes.NewReader(b)), nil
	}
}

func TestRenderFirstPage(t *testing.T) {
	cmd := requiretool.Command(t, "pdftoppm", "apt-get install poppler-utils")
	r := New(Config{Command: cmd, Side: 400})
	pdf := pdftest.Box(200, 100)
	var opened int
	b, err := r.Render(context.Background(), "k1", int64(len(pdf)), opener(pdf, &opened))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the preview is no PNG: %v", err)
	}
	if s := img.Bounds().Size(); s.X != 400 || s.Y != 200 {
		t.Errorf("the preview is %v pixels, want 400×200 (the longest side is Config.Side)", s)
	}
	// The middle is the red box; a corner is white.
	if cr, cg, _, _ := img.At(200, 100).RGBA(); cr>>8 < 200 || cg>>8 > 60 {
		t.Errorf("the middle of the page is %v, want red", img.At(200, 100))
	}
	if cr, cg, cb, _ := img.At(5, 5).RGBA(); cr>>8 < 240 || cg>>8 < 240 || cb>>8 < 240 {
		t.Errorf("the corner of the page is %v, want white", img.At(5, 5))
	}
	// Again: from the cache, the PDF not even opened.
	r.cfg.Command = "/nonexistent/pdftoppm"
	again, err := r.Render(context.Background(), "k1", int64(len(pdf)), opener(pdf, &opened))
	if err != nil || !bytes.Equal(again, b) || opened != 1 {
		t.Errorf("a second render of the same key: err %v, same picture %v, PDF opened %d times; want the cached picture, opened once", err, bytes.Equal(again, b), opened)
	}
}

func TestRenderRefusesHostilePDFs(t *testing.T) {
	cmd := requiretool.Command(t, "pdftoppm", "apt-get install poppler-utils")
	r := New(Config{Command: cmd, Timeout: 2 * time.Second, MaxInputBytes: 1 << 20})
	// A page of a square mile draws at the same size as any other.
	start := time.Now()
	huge := pdftest.Box(14400, 14400)
	b, err := r.Render(context.Background(), "huge", int64(len(huge)), opener(huge, new(int)))
	if err != nil {
		t.Fatalf("a page of 200 inches: %v", err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width != DefaultSide || cfg.Height != DefaultSide {
		t.Errorf("a page of 200 inches renders as %+v (%v), want %d pixels square", cfg, err, DefaultSide)
	}
	t.Logf("a 200-inch page rendered in %v", time.Since(start))

	cases := []struct {
		name string
		pdf  []byte
		want string
	}{
		{"garbage", []byte("this is not a PDF at all\n"), "could not be rendered"},
		{"truncated", pdftest.Box(200, 100)[:60], "could not be rendered"},
		// A million pages claimed, one there: poppler refuses the page tree
		// (or renders page 1); either way, at once.
		{"page count", bytes.Replace(pdftest.Box(200, 100), []byte("/Count 1"), []byte("/Count 1000000"), 1), "any"},
		// A content stream that takes minutes to draw (measured: 25,000
		// filled crossings took 2 min of CPU): stopped at the time limit.
		{"slow", pdftest.Page(600, 600, strings.Repeat("0 0 m 600 600 l 600 0 l 0 600 l h f\n", 20_000)), "took longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := r.Render(context.Background(), c.name, int64(len(c.pdf)), opener(c.pdf, new(int)))
			took := time.Since(start)
			if took > 5*time.Second {
				t.Errorf("the render took %v, past its limit of 2s", took)
			}
			if c.want == "any" {
				if _, bad := errors.AsType[*RenderError](err); err != nil && !bad {
					t.Errorf("err = %v, want a picture or a RenderError", err)
				}
				return
			}
			var re *RenderError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a RenderError saying %q", err, c.want)
			}
			t.Logf("%v after %v", err, took)
		})
	}
	t.Run("too large", func(t *testing.T) {
		var opened int
		_, err := r.Render(context.Background(), "big", 2<<20, opener(nil, &opened))
		if !errors.Is(err, ErrTooLarge) || opened != 0 {
			t.Errorf("a PDF of 2 MiB over a limit of 1 MiB: err %v, opened %d; want ErrTooLarge, not opened", err, opened)
		}
	})
}

func TestRenderWithoutPdftoppm(t *testing.T) {
	var logs bytes.Buffer
	r := New(Config{Command: "agentura-no-such-pdftoppm", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	pdf := pdftest.Box(200, 100)
	for i := range 3 {
		if _, err := r.Render(context.Background(), "k", int64(len(pdf)), opener(pdf, new(int))); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("render %d: err = %v, want ErrUnavailable", i, err)
		}
	}
	if n := strings.Count(logs.String(), "PDFs get no preview"); n != 1 {
		t.Errorf("the missing command was logged %d times, want once:\n%s", n, logs.String())
	}
}

func TestCacheBoundedInBytes(t *testing.T) {
	c := newCache(3000)
	for i := range 10 {
		c.put(string(rune('a'+i)), make([]byte, 1000), nil)
	}
	if c.size > 3000 || len(c.items) != 2 {
		t.Errorf("the cache holds %d entries, %d bytes; want 2 within 3000", len(c.items), c.size)
	}
	if _, _, ok := c.get("j"); !ok {
		t.Error("the newest entry is gone")
	}
	if _, _, ok := c.get("a"); ok {
		t.Error("the oldest entry is still there")
	}
}

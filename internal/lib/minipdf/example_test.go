package minipdf_test

import (
	"bytes"
	"fmt"

	"github.com/agentura/agentura/internal/lib/minipdf"
)

// A one-page PDF with a red box.
func ExampleWrite() {
	pdf := minipdf.Write(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>",
		minipdf.Stream("1 0 0 rg 50 25 100 50 re f"),
	)
	fmt.Println(bytes.HasPrefix(pdf, []byte("%PDF-1.4")), bytes.Contains(pdf, []byte("startxref")))
	// Output: true true
}

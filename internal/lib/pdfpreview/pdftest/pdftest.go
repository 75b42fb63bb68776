// Package pdftest makes PDFs for the tests of PDF previews: one page of a
// given size in points, drawn by a given content stream, with a correct
// cross-reference table.
package pdftest

import (
	"fmt"

	"github.com/agentura/agentura/internal/lib/minipdf"
)

// Page is a PDF of one page of w × h points whose content stream is
// content (PDF drawing operators, such as "1 0 0 rg 10 10 80 40 re f").
func Page(w, h float64, content string) []byte {
	return minipdf.Write(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Contents 4 0 R >>", w, h),
		minipdf.Stream(content+"\n"),
	)
}

// Box is a page of w × h points with a red box on it: a picture that is
// not blank.
func Box(w, h float64) []byte {
	return Page(w, h, fmt.Sprintf("1 0 0 rg %g %g %g %g re f", w/4, h/4, w/2, h/2))
}

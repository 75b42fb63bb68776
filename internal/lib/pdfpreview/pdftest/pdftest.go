// Package pdftest makes PDFs for the tests of PDF previews: one page of a
// given size in points, drawn by a given content stream, with a correct
// cross-reference table.
package pdftest

import (
	"bytes"
	"fmt"
)

// Page is a PDF of one page of w × h points whose content stream is
// content (PDF drawing operators, such as "1 0 0 rg 10 10 80 40 re f").
func Page(w, h float64, content string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Contents 4 0 R >>", w, h),
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content)+1, content),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// Box is a page of w × h points with a red box on it: a picture that is
// not blank.
func Box(w, h float64) []byte {
	return Page(w, h, fmt.Sprintf("1 0 0 rg %g %g %g %g re f", w/4, h/4, w/2, h/2))
}

package ocr_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
)

// benchPage is the text of page n of the benchmark document: a page of
// prose, different on every page.
func benchPage(n int) []string {
	words := []string{"invoice", "delivery", "payment", "customer", "account", "balance", "shipment",
		"quantity", "address", "contract", "receipt", "service", "product", "order", "total"}
	lines := []string{fmt.Sprintf("Page %d of the benchmark document", n)}
	for l := range 14 {
		line := ""
		for w := range 6 {
			line += words[(n*7+l*3+w)%len(words)] + " "
		}
		lines = append(lines, fmt.Sprintf("%02d %s", l+1, line))
	}
	return lines
}

func TestWriteBenchPDF(t *testing.T) {
	var pages [][]string
	for n := range 10 {
		pages = append(pages, benchPage(n+1))
	}
	os.WriteFile(filepath.Join("/tmp", "bench10.pdf"), ocrtest.PDF(t, pages...), 0o644)
}

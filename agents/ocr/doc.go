// Package ocr is the ocr-agent: optical character recognition of scans and
// PDFs with the tesseract command, built on agentcore alone. It is a sample
// of a file-consuming agent done well, and meant to be read:
//
//   - ocr_document reads one PNG, JPEG, TIFF or PDF and returns its text, page
//     by page, plus any of a searchable PDF, hOCR and TSV;
//   - ocr_batch does the same for several files at once, in parallel, each
//     file with its own result or its own error.
//
// Every input is checked before tesseract sees it: its type from its content
// (a text file handed to tesseract would be read as a list of file names),
// its header (corrupt or truncated files), its size in pixels from the
// header alone (decompression bombs), its page count, and the languages
// asked for. PDFs are rasterised by pdftoppm at 300 dpi. Each external
// command runs without a shell and without the agent's AGENT_* settings in
// its environment, under the call's context (cancelling the call kills it),
// with a per-document timeout, and within a limit of processes running at
// once.
//
// The engine is the tesseract command (Debian: tesseract-ocr and a
// tesseract-ocr-<lang> package per language); PDFs need pdftoppm and pdfinfo
// (Debian: poppler-utils). /readyz fails, saying what to install, while one
// is missing.
package ocr

// Package pdfpreview renders the first page of a PDF as a PNG with poppler's
// pdftoppm, for the MCP Apps file view's preview. A PDF is untrusted input,
// so each render is bounded: the PDF's size, the picture's size (its longest
// side), a time limit, the process's address space and CPU time (Linux),
// and the number of renders at once. pdftoppm runs without a shell in a
// process group of its own, killed whole when the time is up, with an
// environment that holds none of the agent's settings. Pictures, and the
// failures of PDFs that cannot be rendered, are kept in a cache bounded in
// bytes, so repeated views do not render again.
package pdfpreview

package transfer

import "github.com/agentura/agentura/transfer/mcpfile"

// File is a file a tool produced, as it appears in structured content: flat
// for one file, under "files" for several.
type File struct {
	// DownloadURL is a signed, expiring URL answering GET and HEAD.
	DownloadURL string `json:"download_url"`
	// Filename is the display name; it may hold a relative sub-path
	// ("images/diagram_002.png") for multi-file results.
	Filename string `json:"filename"`
	// MIMEType is the type detected from content and extension.
	MIMEType string `json:"mime_type"`
	// SizeBytes is the length of the file.
	SizeBytes int64 `json:"size_bytes"`
	// SHA256 is the lowercase hex sha256 of the content; a host verifies each
	// download against it (VerifySHA256). Empty from agents that predate it.
	SHA256 string `json:"sha256,omitempty"`
	// File is the same file as the draft MCP file contract hands it out
	// (SEP-2631's FileValue: an mcp-file URI resolved by
	// files/authorizeDownload, name, MIME type, size, sha-256 digest); a
	// host following the draft finds it here in structuredContent. Absent
	// from agents that predate it.
	File *mcpfile.FileValue `json:"file,omitempty"`
}

// Files is the structured content of a result with several files.
type Files struct {
	Files []File `json:"files"`
}

// Upload is the answer of POST /uploads: URL is a signed URL that works as
// the content of a FileAttachment, for the same owner, until it expires.
type Upload struct {
	URL       string `json:"url"`
	Name      string `json:"name"`
	SizeBytes int64  `json:"size_bytes"`
	MIMEType  string `json:"mime_type"`
}

// RevokeRequest is the body of POST RevokePath: the download URL to end.
type RevokeRequest struct {
	URL string `json:"url"`
}

// Error is the body of every error answer of the HTTP endpoints.
type Error struct {
	Error string `json:"error"`
	// Reason is a code a client can tell a failure of the server's own by
	// (storage_full, storage_unavailable, storage_read_only,
	// identity_provider_unavailable, internal);
	// absent from a refusal of the request itself.
	Reason string `json:"reason,omitempty"`
}

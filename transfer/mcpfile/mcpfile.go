// Package mcpfile holds the shapes and names of the draft MCP file contract,
// SEP-2631 "File Objects and Transfer" (building on SEP-2356's declarative
// file inputs), as pinned at modelcontextprotocol/modelcontextprotocol commit
// c3cf0ebae28c86fc09c1f1db46e5e558911376bb, and as its reference host speaks
// it: openai/codex pull request 28337 (codex-rs, behind its
// mcp_file_transfer flag). Where the two differ this package follows the
// host, and says so.
//
// Everything agentura maps between its own contract (x-file, FileAttachment,
// download_url) and the draft's lives here, once: if the draft changes, this
// package and docs/contract.md change, and agentcore, the client and the
// gateway follow through it. It is a leaf of both sides: it imports the
// standard library only.
//
// In brief: a file-valued input is a URI string whose schema carries an
// "x-mcp-file" object (Input). A host sends either an RFC 2397 data: URI
// (mode "inline") or a file URI that it got from files/authorizeUpload and
// whose bytes it sent to the upload descriptor's URL (mode "upload"). A
// produced file is a FileValue; files/authorizeDownload turns its URI into a
// download descriptor.
package mcpfile

import "slices"

// Names of the contract.
const (
	// Keyword is the JSON Schema keyword marking a file-valued property; its
	// value is an Input object. (agentura's older boolean form is refused
	// by the reference host, which reads an object.)
	Keyword = "x-mcp-file"
	// MetaFileParams is the key under a tool's _meta listing the names of its
	// top-level file arguments (OpenAI's older declaration, which the
	// reference host still honours and merges with Keyword).
	MetaFileParams = "openai/fileParams"
	// MethodAuthorizeUpload asks the server for a file URI and an upload
	// descriptor (AuthorizeUploadParams, AuthorizeUploadResult).
	MethodAuthorizeUpload = "files/authorizeUpload"
	// MethodAuthorizeDownload asks the server for a download descriptor of a
	// file URI (AuthorizeDownloadParams, AuthorizedFile).
	MethodAuthorizeDownload = "files/authorizeDownload"
	// CapabilityFiles is the client capability of the draft
	// (ClientCapability). The reference host declares none and calls the
	// methods whenever a schema allows "upload": servers must not require it.
	CapabilityFiles = "files"
)

// ContentTypeFile is the type of the draft's file content block
// (FileContent): a tool result may carry a produced file in its content as
// {"type": "file", "file": FileValue} (FileOfBlock), beside or instead of a
// FileValue in its structured content.
const ContentTypeFile = "file"

// Transfer modes of an input.
const (
	// ModeInline: the value is a data: URI.
	ModeInline = "inline"
	// ModeUpload: the value is a file URI from files/authorizeUpload.
	ModeUpload = "upload"
)

// TransportHTTPS is the one transport of the draft.
const TransportHTTPS = "https"

// DigestSHA256 is the digest algorithm every implementation must support,
// spelt as the draft spells it (with a hyphen); its value is base64url
// without padding.
const DigestSHA256 = "sha-256"

// Scheme is the URI scheme of the file URIs agentura issues. The draft's
// examples use it; the reference host takes as a file URI any absolute URI
// whose scheme is not data, file, http or https (IsFileURI).
const Scheme = "mcp-file"

// Input is the value of the x-mcp-file keyword (the draft's
// FileInputDescriptor). Every field is optional.
type Input struct {
	// Accept lists MIME types ("application/pdf"), wildcard subtypes
	// ("image/*") and dot-prefixed extensions (".pdf"). Extensions are
	// picker hints; validation compares media types (Accepts).
	Accept []string `json:"accept,omitempty"`
	// MaxSize is the largest accepted file, in bytes: decoded bytes for a
	// data: URI, uploaded bytes for a file URI.
	MaxSize int64 `json:"maxSize,omitempty"`
	// TransferModes lists the allowed modes (ModeInline, ModeUpload); empty
	// allows every mode (Allows).
	TransferModes []string `json:"transferModes,omitempty"`
}

// Allows reports whether the input allows mode: an empty TransferModes
// allows both, as the draft and the reference host read it.
func (in Input) Allows(mode string) bool {
	if len(in.TransferModes) == 0 {
		return mode == ModeInline || mode == ModeUpload
	}
	return slices.Contains(in.TransferModes, mode)
}

// FileValue is a file handle with optional display and integrity metadata:
// a produced file in a tool result, or the file of an authorization.
type FileValue struct {
	URI      string  `json:"uri"`
	Name     string  `json:"name,omitempty"`
	MIMEType string  `json:"mimeType,omitempty"`
	Size     *int64  `json:"size,omitempty"`
	Digest   *Digest `json:"digest,omitempty"`
}

// Digest is the integrity metadata of a complete file (the draft's
// FileDigest).
type Digest struct {
	// Algorithm is DigestSHA256 for every digest agentura makes or checks.
	Algorithm string `json:"algorithm"`
	// Value is the digest in base64url without padding.
	Value string `json:"value"`
}

// TransferDescriptor tells a host how to move bytes over HTTPS (the
// draft's FileTransferDescriptor).
type TransferDescriptor struct {
	// Transport is TransportHTTPS.
	Transport string `json:"transport"`
	// Method is GET for a download, PUT or POST for an upload.
	Method string `json:"method"`
	// URL is where to send or fetch the bytes.
	URL string `json:"url"`
	// Headers are to be sent with the request. The reference host refuses
	// hop-by-hop headers, Host and Content-Length here.
	Headers map[string]string `json:"headers,omitempty"`
	// Multipart, for a POST upload, says to send multipart/form-data.
	Multipart *Multipart `json:"multipart,omitempty"`
	// ExpiresAt is when the descriptor stops working (RFC 3339).
	ExpiresAt string `json:"expiresAt,omitempty"`
}

// Multipart describes a multipart/form-data upload.
type Multipart struct {
	// FileField is the form field carrying the file.
	FileField string `json:"fileField"`
	// Fields are more form fields to send.
	Fields map[string]string `json:"fields,omitempty"`
}

// AuthorizeUploadParams are the params of files/authorizeUpload. The draft
// makes each optional; the reference host sends them all.
type AuthorizeUploadParams struct {
	Name     string  `json:"name,omitempty"`
	MIMEType string  `json:"mimeType,omitempty"`
	Size     *int64  `json:"size,omitempty"`
	Digest   *Digest `json:"digest,omitempty"`
}

// AuthorizeUploadResult is the result of files/authorizeUpload: the file to
// be, where to send its bytes, and optionally where to read it back.
type AuthorizeUploadResult struct {
	File     FileValue           `json:"file"`
	Upload   TransferDescriptor  `json:"upload"`
	Download *TransferDescriptor `json:"download,omitempty"`
}

// AuthorizeDownloadParams are the params of files/authorizeDownload.
type AuthorizeDownloadParams struct {
	URI string `json:"uri"`
}

// AuthorizedFile is the result of files/authorizeDownload (the draft's
// AuthorizeDownloadResult, whose download is required there).
type AuthorizedFile struct {
	File     FileValue           `json:"file"`
	Download *TransferDescriptor `json:"download,omitempty"`
}

// ClientCapability is the draft's capabilities.files of a client.
type ClientCapability struct {
	Upload     bool     `json:"upload,omitempty"`
	Download   bool     `json:"download,omitempty"`
	Transports []string `json:"transports,omitempty"`
}

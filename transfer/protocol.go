package transfer

// The names both sides of the protocol agree on: schema keywords, _meta keys,
// paths, headers and the A2A message keys. Each is declared here once; the
// agent (agentcore, fileserve) and the hosts (client, the agentura CLI, the
// A2A client a2acall) use these.

// Schema keywords that mark file parameters. "x-file" is this project's (and
// the file-handling spec's); "x-mcp-file" is the one of the draft MCP file
// proposals (SEP-2356, SEP-2631). Agents emit both; hosts accept either.
const (
	KeywordFile    = "x-file"
	KeywordMCPFile = "x-mcp-file"
)

// Keys under _meta.
const (
	// MetaFileParams is the key under a tool's _meta that lists its file
	// parameters ("source", "embeds[].content").
	MetaFileParams = "agentura/fileParams"
	// MetaProduced is the key under a result's _meta, as the client middleware
	// rewrites it, that lists the registry names of the files the call
	// produced, in order.
	MetaProduced = "agentura/produced"
	// MetaFailed is the key under a rewritten result's _meta that lists the
	// produced files that could not be fetched, as "name: reason".
	MetaFailed = "agentura/failed"
	// MetaOwner is the key under _meta that carries an anonymous caller's
	// owner handle: an agent returns it with each tool result of a call
	// that has no MCP session (MCP 2026-07-28, or AGENT_MCP_STATELESS) and
	// takes it back in the _meta of later requests, so that resources/list
	// shows the files produced under it and no one else's. It is opaque,
	// signed and unguessable; a caller keeps it as it keeps a session.
	MetaOwner = "agentura/owner"
	// MetaSHA256 is the key under a resource_link's _meta (and an A2A file
	// artifact's metadata) that holds the file's lowercase hex sha256.
	MetaSHA256 = "sha256"
	// MetaContent is the key under the _meta of a content block the client
	// rewrote, because the go-sdk cannot decode its type, into one it can
	// (a resource_link for the draft's file block, a text block for any
	// other): it holds the block as the server sent it.
	MetaContent = "agentura/content"
	// MetaTaskProgress is the key under a running MCP task's _meta (its
	// tasks/get answer and notifications) that holds the tool's last
	// progress report: {"progress": done, "total": total}.
	MetaTaskProgress = "agentura/progress"
)

// MCP Apps (the extension io.modelcontextprotocol/ui, stable revision
// 2026-01-26): views are ui:// resources of type AppMIMEType that a tool
// names in _meta.ui.resourceUri; a host shows one in a sandboxed iframe,
// under a CSP built from the resource's _meta.ui.csp.
const (
	// AppsExtension is the extension's identifier, under the extensions of
	// client and server capabilities.
	AppsExtension = "io.modelcontextprotocol/ui"
	// AppsRevision is the revision of the extension agentura implements,
	// the protocolVersion of its views' ui/initialize.
	AppsRevision = "2026-01-26"
	// AppMIMEType is the MIME type of an HTML view.
	AppMIMEType = "text/html;profile=mcp-app"
	// MetaUI is the key under a tool's and a view resource's _meta that
	// holds the extension's fields (resourceUri, visibility; csp,
	// prefersBorder).
	MetaUI = "ui"
	// MetaUIResourceURI is the deprecated flat key of a tool's view
	// (_meta["ui/resourceUri"]), still read by hosts of early drafts.
	MetaUIResourceURI = "ui/resourceUri"
	// FilesViewURI is the view agentura links to every tool that hands
	// out files: each produced file with a preview and a download button.
	FilesViewURI = "ui://agentura/files"
	// UploadViewURI is the view of the attach_file tool: files dropped on
	// it are uploaded to the agent (tus) and named to the model.
	UploadViewURI = "ui://agentura/upload"
	// MetaUploadCapability is the key under attach_file's result _meta
	// that hands its view an UploadCapability.
	MetaUploadCapability = "agentura/upload"
	// HeaderUploadCapability carries an UploadCapability's token on the
	// tus requests of a view: a sandboxed page (Origin: null) holding no
	// credentials of its own.
	HeaderUploadCapability = "X-Upload-Capability"
	// HeaderFileURI answers a view's tus request that completes a file (or
	// finds it complete) with the file's URI without its token,
	// mcp-file://<host>/in/<id>: the reference the view names the file by
	// to the model, which passes it as a file's content. It resolves only
	// for the caller of attach_file (its owner, and its scope when
	// anonymous); the signed File-Url stays with the view.
	HeaderFileURI = "X-File-Uri"
)

// UploadCapability lets an MCP Apps view upload files for the caller of
// attach_file, straight to the agent with tus: short-lived, bound to that
// caller, good for nothing else.
type UploadCapability struct {
	// Endpoint is the agent's tus endpoint (<public URL>/uploads/tus/).
	Endpoint string `json:"endpoint"`
	// Token goes in the HeaderUploadCapability header of each request.
	Token string `json:"token"`
	// ExpiresAt is when the token stops being accepted (RFC 3339).
	ExpiresAt string `json:"expires_at"`
	// MaxBytes is the largest file the agent takes (AGENT_MAX_UPLOAD_BYTES).
	MaxBytes int64 `json:"max_bytes"`
}

// ProducedPrefix starts the text line that names a produced file for models
// without client middleware: "Tool produced: report.pptx (PowerPoint, 1.0 MB) <url>".
const ProducedPrefix = "Tool produced: "

// Paths and headers of an agent's HTTP endpoints.
const (
	// UploadsPath is the staging endpoint: POST a file, get a signed URL.
	UploadsPath = "/uploads"
	// TusPath is the resumable upload endpoint (tus 1.0): POST creates an
	// upload, PATCH sends its bytes, HEAD tells the offset to resume from.
	TusPath = "/uploads/tus/"
	// A2APath serves A2A JSON-RPC (message/send, message/stream, tasks/get, ...).
	A2APath = "/a2a"
	// AgentCardPath serves the A2A agent card (a2a-go's well-known path).
	AgentCardPath = "/.well-known/agent-card.json"
	// RevokePath revokes one download URL: POST {"url": "<download URL>"}
	// (RevokeRequest). DELETE on a download URL deletes the file itself.
	RevokePath = "/files/revoke"
	// HeaderFilename names the file of a raw-body upload, as
	// UTF-8''<percent-encoded name> (RFC 8187) or plain ASCII.
	HeaderFilename = "X-Filename"
	// HeaderFileURL carries, on the answer that completes a tus upload,
	// the signed URL of the staged file (what POST /uploads answers as url).
	HeaderFileURL = "File-Url"
)

// Headers of MCP's streamable HTTP transport that both sides read.
const (
	// HeaderMCPProtocolVersion names the revision of a request.
	HeaderMCPProtocolVersion = "Mcp-Protocol-Version"
	// HeaderMCPSessionID names the session of a request of a revision
	// before 2026-07-28.
	HeaderMCPSessionID = "Mcp-Session-Id"
	// HeaderMCPMethod repeats a 2026-07-28 request's method (SEP-2243).
	HeaderMCPMethod = "Mcp-Method"
)

// A2A: the data part that names the tool, the card extensions that name the
// uploads endpoint and the skills' input schemas, and the keys of metadata.
const (
	// A2AKeySkill is the key of the data part {"skill", "arguments"} that
	// names the skill (tool) to run.
	A2AKeySkill = "skill"
	// A2AKeyArguments is the key of the data part that holds the tool's
	// arguments.
	A2AKeyArguments = "arguments"
	// A2AUploadsExtension is the URI of the agent card extension that tells
	// callers where to stage large inputs: its params hold "url", the agent's
	// POST /uploads endpoint, whose signed URL is then sent as a file part's
	// "uri".
	A2AUploadsExtension = "https://github.com/agentura/agentura/a2a/uploads"
	// A2ASkillSchemasExtension is the URI of the agent card extension that
	// publishes each skill's input schema: its params map a skill's id to
	// the JSON schema of its arguments, the tool's MCP input schema (file
	// parameters marked x-file and x-mcp-file).
	A2ASkillSchemasExtension = "https://github.com/agentura/agentura/a2a/skill-schemas"
	// A2AKeyFileParam is the key of a file part's metadata that names the
	// file parameter of the skill the file fills ("source", or "sources"
	// for one of a list); a file part without it fills the skill's first
	// file parameter.
	A2AKeyFileParam = "agentura/param"
	// A2AKeyChunks is the key of a message's metadata by which a caller that
	// follows the task over a stream asks for produced files in chunks as
	// they are written (true): artifact updates whose file parts carry the
	// bytes from the offset in their metadata (MetaChunkOffset), then a
	// last chunk with the file's signed URL, size and sha256 (docs/a2a.md).
	A2AKeyChunks = "agentura/chunks"
	// MetaChunkOffset is the key of a chunk's file part metadata: where the
	// part's bytes start in the file.
	MetaChunkOffset = "agentura/offset"
	// A2AChunkBytes is the most bytes one chunk carries: its event, base64
	// and JSON, stays under the 64 KiB line a2a-go's SSE reader takes.
	A2AChunkBytes = 32 << 10
)

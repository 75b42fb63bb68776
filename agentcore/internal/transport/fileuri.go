package transport

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/agentura/agentura/signing"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The draft MCP file contract (SEP-2631, transfer/mcpfile) on the agent's
// side: files/authorizeUpload and files/authorizeDownload, and the file
// URIs they deal in.
//
// A file URI is mcp-file://<host of AGENT_PUBLIC_URL>/<kind>/<id>?token=…:
// kind "in" names an upload ticket (the file a host announced, then sent
// to the upload descriptor, which lands in the staging area like any
// upload), kind "out" a produced file. The token is the capability to the
// file (mcpfile.CapabilityURI), so that whoever holds the FileValue
// resolves it, as SEP-2631 expects of a URI: a produced file's is a
// download token (expiry, revocation), an upload's a token of the area
// "mcp-file-in". Without its token a URI resolves only for the owner it
// was issued to, in the scope it was issued in. The upload's bytes go to
// the descriptor's URL, signed like a download URL (signing: HS256
// pinned, key id, audience, expiry), whose token names the ticket in the
// area "mcp-upload" — no storage area, so it never opens a file.

const (
	// FileKindIn is the kind of the file URI of an upload ticket.
	FileKindIn = "in"
	// FileKindOut is the kind of the file URI of a produced file.
	FileKindOut = "out"
	// TicketRecordKind is the kind of the records (fileserve.RecordStore)
	// of upload tickets: owner = the caller, name = the ticket id.
	TicketRecordKind = "mcp-file-tickets"
	// uploadTicketArea is the Area claim of an upload descriptor's token.
	uploadTicketArea = "mcp-upload"
	// uploadURIArea is the Area claim of the token an upload's file URI
	// carries: it names the ticket, and opens no file by itself.
	uploadURIArea = "mcp-file-in"
	// TicketUploadPath is where an upload descriptor sends the bytes:
	// PUT <AGENT_PUBLIC_URL>/uploads/mcp/<ticket>?token=<JWT>.
	TicketUploadPath = "/uploads/mcp/"
)

// FileURIs is the transport of the draft MCP file contract: in, a file URI
// of an upload ticket or of a produced file; out, each produced file's
// FileValue. It answers files/authorizeUpload and files/authorizeDownload
// (the MCP binding serves them) and the upload descriptors' PUTs.
type FileURIs struct {
	FileURIConfig
	tickets fileTickets
}

// FileURIConfig is what the draft's files need of the agent.
type FileURIConfig struct {
	PublicURL string
	Store     fileserve.Store
	Files     *filehttp.Server      // signed download URLs
	Signer    *signing.Signer       // upload descriptors' tokens
	Presign   fileserve.Presigner   // AGENT_S3_REDIRECT; nil: downloads go through the agent
	Records   fileserve.RecordStore // nil: tickets kept in memory
	Scopes    *Scopes
	// Authenticated: a bearer names each caller (AGENT_AUTH jwt or oauth),
	// and the store's per-owner lookup is the scope check.
	Authenticated                 bool
	MaxUploadBytes                int64
	URLTTL, StagingTTL, OutputTTL time.Duration
	// Tools lists the agent's tools, whose accept lists a file must meet.
	Tools func() []calls.Tool
	Log   *slog.Logger
}

// NewFileURIs serves the draft's files with c.
func NewFileURIs(c FileURIConfig) *FileURIs {
	return &FileURIs{FileURIConfig: c, tickets: fileTickets{records: c.Records, ttl: c.StagingTTL}}
}

// Schemes is the draft's "mcp-file".
func (*FileURIs) Schemes() []string { return []string{mcpfile.Scheme} }

// Describe names the form; it stands for the draft's upload mode.
func (*FileURIs) Describe() Description {
	return Description{Content: "file URI from files/authorizeUpload", Mode: mcpfile.ModeUpload}
}

// Resolves is not asked: the transport has a scheme.
func (*FileURIs) Resolves(string) bool { return false }

// Offer describes m as the FileValue of its file URI, which carries the
// capability to the file (mcpfile.CapabilityURI): whoever holds the
// FileValue resolves it with files/authorizeDownload, on any replica,
// without a session or a handle of agentura's own. Its token is the one of
// the download URL offered with it when there is one (revoking that URL
// revokes the URI; both expire together), else one of its own.
func (f *FileURIs) Offer(m fileserve.Meta, o *Offer) error {
	token := ""
	if u, err := url.Parse(o.File.DownloadURL); err == nil && o.File.DownloadURL != "" {
		token = u.Query().Get("token")
	}
	if token == "" {
		var err error
		if token, err = f.Files.Token(m); err != nil {
			return err
		}
	}
	fv := fileValue(mcpfile.CapabilityURI(f.fileAuthority(), FileKindOut, m.ID, token), m)
	o.File.File = &fv
	return nil
}

// fileTicket is what files/authorizeUpload promised: a file of this name,
// size and (when given) digest, from this owner, until Expires; Staged is
// the staged file's id once the bytes arrived.
type fileTicket struct {
	Name     string    `json:"name"`
	MIMEType string    `json:"mime_type,omitempty"`
	Size     int64     `json:"size"`   // declared; -1 when the host gave none
	SHA256   string    `json:"sha256"` // declared, lowercase hex; "" when none
	Expires  time.Time `json:"expires"`
	Staged   string    `json:"staged,omitempty"`
	// Scope is the anonymous caller's scope it was announced in
	// (filescope.go); "" for none, and under authentication.
	Scope string `json:"scope,omitempty"`
	// Grant is the id of the upload view's capability that staged the
	// file (viewuploads.go); "" for a ticket of files/authorizeUpload.
	Grant string `json:"grant,omitempty"`
}

// fileTickets keeps upload tickets: in the store's records when it has
// them (every replica sees them; the sweeper expires them with the staged
// files), else in this process's memory.
type fileTickets struct {
	records fileserve.RecordStore // nil: memory
	ttl     time.Duration         // of a ticket in memory (AGENT_STAGING_TTL)
	mu      sync.Mutex
	mem     map[[2]string]memTicket
	// uploading are the tickets whose PUT runs in this process: a second
	// PUT of the same descriptor meanwhile is refused, not stored twice.
	uploading sync.Map // [2]string{owner, id} → struct{}
}

type memTicket struct {
	t       fileTicket
	written time.Time
}

// maxMemTickets bounds the tickets kept in memory, maxMemTicketsPerOwner
// those of one owner among them, so that one owner announcing uploads it
// never sends does not keep the others from announcing theirs.
const (
	maxMemTickets         = 10000
	maxMemTicketsPerOwner = 1000
)

func (f *fileTickets) put(ctx context.Context, owner, id string, t fileTicket) error {
	if f.records != nil {
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		return f.records.PutRecord(ctx, TicketRecordKind, owner, id, b)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if f.mem == nil {
		f.mem = map[[2]string]memTicket{}
	}
	owned := 0
	for k, m := range f.mem {
		switch {
		case now.Sub(m.written) > f.ttl:
			delete(f.mem, k)
		case k[0] == owner:
			owned++
		}
	}
	key := [2]string{owner, id}
	if _, kept := f.mem[key]; !kept {
		// A kept ticket is updated (its upload recorded) whatever the caps.
		if owned >= maxMemTicketsPerOwner {
			return fmt.Errorf("owner %q has %d file uploads announced and not yet sent, the most one owner may have pending (%d); "+
				"send the files to their upload descriptors, or wait until announced ones expire (AGENT_STAGING_TTL=%v)", calls.Truncate(owner, 80), owned, maxMemTicketsPerOwner, f.ttl)
		}
		if len(f.mem) >= maxMemTickets {
			return fmt.Errorf("this agent has %d file uploads pending, the most it keeps (%d); try again later", len(f.mem), maxMemTickets)
		}
	}
	f.mem[key] = memTicket{t: t, written: now}
	return nil
}

// get returns owner's ticket id, or an error wrapping fileserve.ErrNotFound.
func (f *fileTickets) get(ctx context.Context, owner, id string) (fileTicket, error) {
	var t fileTicket
	if f.records != nil {
		b, err := f.records.GetRecord(ctx, TicketRecordKind, owner, id)
		if err != nil {
			return t, err
		}
		return t, json.Unmarshal(b, &t)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.mem[[2]string{owner, id}]
	if !ok || time.Since(m.written) > f.ttl {
		return t, fileserve.ErrNotFound
	}
	return m.t, nil
}

// fileAuthority is the authority of the agent's file URIs: the host (and
// port) of AGENT_PUBLIC_URL.
func (f *FileURIs) fileAuthority() string {
	u, err := url.Parse(f.PublicURL)
	if err != nil {
		return "agent"
	}
	return u.Host
}

// URI is the file URI of a file of kind with id.
func (f *FileURIs) URI(kind, id string) string {
	return mcpfile.URI(f.fileAuthority(), kind, id)
}

// fileValue describes a stored file as a FileValue of the given URI.
func fileValue(uri string, m fileserve.Meta) mcpfile.FileValue {
	size := m.Size
	return mcpfile.FileValue{URI: uri, Name: m.Name, MIMEType: m.MIMEType, Size: &size, Digest: mcpfile.SHA256(m.SHA256)}
}

// fileError is the JSON-RPC error refusing a file: code -32602 (the
// draft's for a broken constraint or an unusable URI) unless the failure
// is the agent's own, with the reason in data.
func fileError(code int64, data mcpfile.ErrorData, format string, args ...any) error {
	b, _ := json.Marshal(data)
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...), Data: b}
}

// Failure is the JSON-RPC error of a failure of the agent's own met while
// doing what: the cause in words and its reason code in data (fault.Of),
// the details, which may name paths, keys and addresses, in log alone.
func Failure(ctx context.Context, log *slog.Logger, what string, err error) error {
	ft := fault.Of(what, err)
	log.LogAttrs(ctx, slog.LevelError, what, slog.String("reason", ft.Reason), slog.String("error", ft.Err.Error()))
	return fileError(jsonrpc.CodeInternalError, mcpfile.ErrorData{Reason: ft.Reason}, "%s", ft.Words)
}

// AuthorizeUpload checks what the host announces against what the agent
// takes (size, type, digest form, quota) and answers a file URI with a
// one-file PUT descriptor into the staging area. Its errors are JSON-RPC
// errors with the draft's reasons.
func (f *FileURIs) AuthorizeUpload(ctx context.Context, owner string, p mcpfile.AuthorizeUploadParams) (*mcpfile.AuthorizeUploadResult, error) {
	limit := f.MaxUploadBytes
	size := int64(-1)
	if p.Size != nil {
		size = *p.Size
		if size < 0 {
			return nil, fileError(jsonrpc.CodeInvalidParams, mcpfile.ErrorData{Reason: mcpfile.ReasonSizeMismatch}, "size %d is negative", size)
		}
		if size > limit {
			return nil, fileError(jsonrpc.CodeInvalidParams, mcpfile.ErrorData{Reason: mcpfile.ReasonMaxSizeExceeded, MaxSize: limit, ActualSize: size},
				"the file is %d bytes, more than this agent takes (maxSize %d, AGENT_MAX_UPLOAD_BYTES); send a smaller file", size, limit)
		}
	}
	if _, _, err := mime.ParseMediaType(p.MIMEType); p.MIMEType != "" && (err != nil || !strings.Contains(p.MIMEType, "/")) {
		return nil, fileError(jsonrpc.CodeInvalidParams, mcpfile.ErrorData{Reason: mcpfile.ReasonTypeNotAccepted, MIMEType: calls.Truncate(p.MIMEType, 80)},
			"mimeType %q is not a media type such as application/pdf", calls.Truncate(p.MIMEType, 80))
	}
	if accept := f.acceptedTypes(); p.MIMEType != "" && !mcpfile.Accepts(accept, p.MIMEType) {
		return nil, fileError(jsonrpc.CodeInvalidParams, mcpfile.ErrorData{Reason: mcpfile.ReasonTypeNotAccepted, Accept: accept, MIMEType: p.MIMEType},
			"no tool of this agent takes %s files; it takes %s", p.MIMEType, strings.Join(accept, ", "))
	}
	var sum string
	if p.Digest != nil {
		h, err := p.Digest.Hex()
		if err != nil {
			return nil, fileError(jsonrpc.CodeInvalidParams, mcpfile.ErrorData{Reason: mcpfile.ReasonBadDigest}, "%v", err)
		}
		sum = h
	}
	if r, ok := fileserve.As[quota.Reserver](f.Store); ok && size > 0 {
		// The quota is checked now, so that a host learns before sending
		// the bytes; the upload itself is counted when it lands.
		key := "mcp-authorize-" + fileserve.NewID()
		if err := r.Reserve(ctx, owner, key, size); err != nil {
			if qe, ok := errors.AsType[*quota.Error](err); ok {
				return nil, fileError(jsonrpc.CodeInvalidParams, mcpfile.ErrorData{Reason: mcpfile.ReasonQuotaExceeded, ActualSize: size}, "%s", qe.Error())
			}
			return nil, Failure(ctx, f.Log, "check the storage quota", err)
		}
		r.Release(owner, key)
	}
	name := cmp.Or(SanitizeName(p.Name), nameForType("upload", p.MIMEType))
	now := time.Now()
	expires := now.Add(min(f.URLTTL, f.StagingTTL))
	id := fileserve.NewID()
	t := fileTicket{Name: name, MIMEType: p.MIMEType, Size: size, SHA256: sum, Expires: expires, Scope: calls.FileScope(ctx)}
	if err := f.tickets.put(ctx, owner, id, t); err != nil {
		return nil, Failure(ctx, f.Log, "keep the upload ticket", err)
	}
	tok, err := f.Signer.Sign(signing.Claims{Owner: owner, FileID: id, Area: uploadTicketArea, ExpiresAt: expires})
	if err != nil {
		return nil, Failure(ctx, f.Log, "sign the upload descriptor", err)
	}
	// The file URI carries its own capability, good while the staged file
	// may last: the descriptor's time, then AGENT_STAGING_TTL.
	capTok, err := f.Signer.Sign(signing.Claims{Owner: owner, FileID: id, Area: uploadURIArea, ExpiresAt: expires.Add(f.StagingTTL)})
	if err != nil {
		return nil, Failure(ctx, f.Log, "sign the file URI", err)
	}
	file := mcpfile.FileValue{URI: mcpfile.CapabilityURI(f.fileAuthority(), FileKindIn, id, capTok), Name: name, MIMEType: p.MIMEType, Digest: p.Digest}
	if size >= 0 {
		file.Size = &size
	}
	desc := mcpfile.TransferDescriptor{
		Transport: mcpfile.TransportHTTPS,
		Method:    "PUT",
		URL:       strings.TrimRight(f.PublicURL, "/") + TicketUploadPath + id + "?token=" + tok,
		ExpiresAt: expires.UTC().Format(time.RFC3339),
	}
	if p.MIMEType != "" {
		desc.Headers = map[string]string{"Content-Type": p.MIMEType}
	}
	return &mcpfile.AuthorizeUploadResult{File: file, Upload: desc}, nil
}

// AuthorizeDownload answers a download descriptor of one of the caller's
// files: a signed URL of the agent, or a presigned URL of the store when
// AGENT_S3_REDIRECT hands those out (the reference host follows no
// redirect, so it gets the store's URL itself).
func (f *FileURIs) AuthorizeDownload(ctx context.Context, owner, uri string) (*mcpfile.AuthorizedFile, error) {
	m, err := f.fileOfURI(ctx, owner, uri)
	if err != nil {
		if _, ours := errors.AsType[*fault.Fault](err); ours {
			return nil, Failure(ctx, f.Log, "look the file up", err)
		}
		return nil, fileError(jsonrpc.CodeInvalidParams, mcpfile.ErrorData{Reason: mcpfile.ReasonUnknownFile}, "%v", err)
	}
	var link string
	expires := time.Now().Add(f.URLTTL)
	if f.Presign != nil {
		link, err = f.Presign.Presign(ctx, m, f.URLTTL, m.MIMEType, "attachment")
	} else {
		link, err = f.Files.URL(m)
	}
	if err != nil {
		return nil, Failure(ctx, f.Log, "sign the download", err)
	}
	desc := &mcpfile.TransferDescriptor{Transport: mcpfile.TransportHTTPS, Method: "GET", URL: link, ExpiresAt: expires.UTC().Format(time.RFC3339)}
	return &mcpfile.AuthorizedFile{File: fileValue(uri, m), Download: desc}, nil
}

// fileOfURI finds the stored file a file URI names, for owner: a produced
// file, or the staged file of an upload ticket (checked against the size
// and digest the ticket declared). Its errors say what is wrong and what
// to do.
func (f *FileURIs) fileOfURI(ctx context.Context, owner, uri string) (fileserve.Meta, error) {
	authority, kind, id, token, ok := mcpfile.ParseURI(uri)
	shown := calls.Truncate(uriWithoutToken(uri), 120)
	if !ok {
		return fileserve.Meta{}, fmt.Errorf("%q is not a file URI of this agent (mcp-file://%s/in/<id> or /out/<id>)", shown, f.fileAuthority())
	}
	if !strings.EqualFold(authority, f.fileAuthority()) {
		return fileserve.Meta{}, fmt.Errorf("file URI %q was issued by %s, not by this agent (%s): file URIs are good only at the server that issued them; upload the file here with files/authorizeUpload", shown, authority, f.fileAuthority())
	}
	gone := fmt.Errorf("file URI %q is unknown to this agent: it was never issued to you, or it expired (uploads last AGENT_STAGING_TTL=%v, produced files AGENT_OUTPUT_TTL=%v); upload the file again", shown, f.StagingTTL, f.OutputTTL)
	// A capability (the URI's token) stands for the scope check, and
	// names the owner: under authentication it must be the caller.
	scoped := false
	if token != "" {
		c, err := f.capability(kind, id, token)
		if err != nil {
			return fileserve.Meta{}, fmt.Errorf("file URI %q: %v; ask for the file again (files/authorizeDownload of a fresh URI, or the tool's result)", shown, err)
		}
		if f.Authenticated && c.Owner != owner {
			return fileserve.Meta{}, gone
		}
		owner, scoped = c.Owner, true
	}
	switch kind {
	case FileKindOut:
		if !fileserve.ValidID(id) {
			return fileserve.Meta{}, gone
		}
		if !scoped {
			if ok, err := f.producedInScope(ctx, id); err != nil {
				return fileserve.Meta{}, fault.Of("look the file up", err)
			} else if !ok {
				return fileserve.Meta{}, gone
			}
		}
		m, err := f.Store.Stat(ctx, fileserve.Outputs, owner, id)
		switch {
		case errors.Is(err, fileserve.ErrNotFound):
			return m, gone
		case err != nil:
			return m, fault.Of("look the file up", err)
		}
		return m, nil
	case FileKindIn:
		t, err := f.tickets.get(ctx, owner, id)
		inScope := scoped
		if err == nil && !scoped {
			inScope, err = f.ticketInScope(ctx, t)
		}
		if errors.Is(err, fileserve.ErrNotFound) || err == nil && (!inScope || t.Staged == "" && time.Now().After(t.Expires)) {
			return fileserve.Meta{}, gone
		}
		if err != nil {
			return fileserve.Meta{}, fault.Of("look the upload up", err)
		}
		if t.Staged == "" {
			return fileserve.Meta{}, fmt.Errorf("file URI %q names an upload that has not arrived: send the bytes to the upload descriptor's URL (until %s) before using the URI", shown, t.Expires.UTC().Format(time.RFC3339))
		}
		m, err := f.Store.Stat(ctx, fileserve.Staging, owner, t.Staged)
		if errors.Is(err, fileserve.ErrNotFound) {
			return m, gone
		}
		if err != nil {
			return m, fault.Of("look the upload up", err)
		}
		if t.SHA256 != "" && !strings.EqualFold(m.SHA256, t.SHA256) {
			return m, fmt.Errorf("the file of %q does not match its declared sha-256; upload it again", shown)
		}
		return m, nil
	}
	return fileserve.Meta{}, gone
}

// capability checks the token of a file URI of kind and id: a produced
// file's is a download token (signature, expiry, audience, revocation: a
// download URL's rules), an upload's a token of the area uploadURIArea;
// either must name id. It returns the token's claims, whose owner the
// file is.
func (f *FileURIs) capability(kind, id, token string) (signing.Claims, error) {
	var c signing.Claims
	var err error
	area := uploadURIArea
	if kind == FileKindOut {
		c, err = f.Files.VerifyToken(token)
		area = string(fileserve.Outputs)
	} else {
		c, err = f.Signer.Verify(token)
	}
	if ve, ok := errors.AsType[*signing.VerifyError](err); ok {
		return c, errors.New(ve.Reason)
	}
	if err != nil || c.Area != area || c.FileID != id {
		return c, errors.New("its token is not this file's")
	}
	return c, nil
}

// uriWithoutToken is uri without its capability, for errors and logs.
func uriWithoutToken(uri string) string {
	base, _, _ := strings.Cut(uri, "?")
	return base
}

// Open opens the file a file URI names for owner; reading it to its end
// fails if the bytes no longer hash to the sha-256 recorded when they were
// stored.
func (f *FileURIs) Open(ctx context.Context, owner, uri string) (*Source, error) {
	m, err := f.fileOfURI(ctx, owner, uri)
	if err != nil {
		return nil, err
	}
	obj, m, err := f.Store.Open(ctx, m.Area, m.Owner, m.ID)
	if errors.Is(err, fileserve.ErrNotFound) {
		return nil, fmt.Errorf("file URI %q: the file is gone (swept); upload it again", calls.Truncate(uriWithoutToken(uri), 120))
	}
	if err != nil {
		return nil, fault.Of("open the file", err)
	}
	return &Source{ReadCloser: readCloser{transfer.VerifySHA256(obj, m.SHA256, m.Name), obj}, Name: m.Name, MIMEType: m.MIMEType, Size: m.Size, Where: "the file"}, nil
}

// acceptedTypes is the union of the accept lists of the tools' file
// parameters, or nil when one of them takes any file: what
// files/authorizeUpload, which is not told which tool the file is for,
// can enforce.
func (f *FileURIs) acceptedTypes() []string {
	var out []string
	anyType := false
	for _, t := range f.Tools() {
		walkMCPFile(t.InputSchema, func(in mcpfile.Input) {
			types := 0
			for _, a := range in.Accept {
				if !strings.HasPrefix(a, ".") {
					types++
					if !slices.ContainsFunc(out, func(v string) bool { return strings.EqualFold(v, a) }) {
						out = append(out, a)
					}
				}
			}
			anyType = anyType || types == 0
		})
	}
	if anyType {
		return nil
	}
	return out
}

// walkMCPFile calls fn with each x-mcp-file declaration in s.
func walkMCPFile(s *jsonschema.Schema, fn func(mcpfile.Input)) {
	if s == nil {
		return
	}
	if in, ok := s.Extra[mcpfile.Keyword].(mcpfile.Input); ok {
		fn(in)
	}
	for _, p := range s.Properties {
		walkMCPFile(p, fn)
	}
	for _, d := range s.Defs {
		walkMCPFile(d, fn)
	}
	for _, b := range s.AnyOf {
		walkMCPFile(b, fn)
	}
	walkMCPFile(s.Items, fn)
	walkMCPFile(s.AdditionalProperties, fn)
}

// Without authentication every caller is the one store owner
// (AnonymousOwner), so the store alone cannot tell whose a produced file is.
// A produced file's URI without its token (mcp-file://<host>/out/<id>) is a
// handle, not a capability: files/authorizeDownload and a tool's file input
// take it only from the scope it was produced in (the MCP binding decides:
// the caller's owner handle, else its session), and answer any other caller
// as if the file did not exist. An upload's (/in/<id>) likewise, when it was
// announced in a scope. Under authentication the owner is the caller, and
// the store's per-owner lookup is the check.

// producedInScope reports whether the caller of ctx may name the produced
// file id by its file URI: always under authentication, else only when the
// file was produced in the caller's scope.
func (f *FileURIs) producedInScope(ctx context.Context, id string) (bool, error) {
	if f.Authenticated {
		return true, nil
	}
	scope := calls.FileScope(ctx)
	if scope == "" {
		return false, nil
	}
	return f.Scopes.has(ctx, scope, id)
}

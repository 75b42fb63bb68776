package apps

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/httpguard"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/signing"
	"github.com/agentura/agentura/transfer"
)

// The upload view: the tool attach_file opens a view (transfer.UploadViewURI)
// that takes files by drag-and-drop or a picker and uploads them straight to
// the agent with tus (resumable: a dropped connection resumes where it
// stopped), then names them to the model with ui/update-model-context: by
// name and by reference, the file URI without its token that the agent
// answers in transfer.HeaderFileURI (Config.Adopt), never by the signed
// File-Url, which stays with the view. The bytes never pass through the
// host's JSON-RPC or the model.
//
// The view runs sandboxed (Origin: null, or the origin of the host's
// sandbox when the host allows the view same-origin) and holds no
// credentials: it is authorised by an upload capability that attach_file's
// result hands it in _meta (transfer.MetaUploadCapability), a token signed
// with the URL key, bound to the caller, expiring with the download URLs
// (AGENT_URL_TTL, at most an hour). The tus endpoint admits exactly such
// requests from any origin, answering them with CORS headers (no
// credentials): the capability travels in a header a page can only send
// after a preflight, so it is the whole authority, as a signed URL is for
// downloads. Any other cross-site request is refused as before
// (httpguard.Origin).

// AttachToolName is the name of the tool agentcore's AddAttachTool adds.
const AttachToolName = "attach_file"

// capabilityArea is the Area claim of an upload capability: no storage
// area, so a capability is never a download token, nor a download token a
// capability.
const capabilityArea = "upload-capability"

// maxCapabilityTTL caps an upload capability's lifetime.
const maxCapabilityTTL = time.Hour

// AddUpload registers the upload view (transfer.UploadViewURI).
func (s *Views) AddUpload() error {
	return s.Add(View{
		URI: transfer.UploadViewURI, Name: "agentura-upload", Title: "Attach files",
		Description: "Drop files to upload them to the agent (resumable); the model receives their names and references.",
		HTML:        mustView("upload"),
	})
}

// Attach answers attach_file for owner, the caller of ctx: a capability
// for the view, placed in the caller's scope (Config.Grant), and text for
// hosts without a view; note says what to ask the user for.
func (s *Views) Attach(ctx context.Context, owner, note string) (*calls.Result, error) {
	ttl := min(s.URLTTL, maxCapabilityTTL)
	exp := time.Now().Add(ttl)
	id := fileserve.NewID()
	if s.Grant != nil {
		if err := s.Grant(ctx, id); err != nil {
			return nil, fmt.Errorf("keep the upload view's grant: %w", err)
		}
	}
	token, err := s.Signer.Sign(signing.Claims{Owner: owner, FileID: id, Area: capabilityArea, ExpiresAt: exp})
	if err != nil {
		return nil, fmt.Errorf("sign the upload capability: %w", err)
	}
	endpoint := s.PublicURL + transfer.TusPath
	res := &calls.Result{
		Text: "The upload view is open: files the user drops there go straight to this agent, and each file's name and " +
			"file URI (mcp-file://…) reach you as context; pass the URI as the file's content. Without the view, a file is " +
			"staged with POST " + s.PublicURL + transfer.UploadsPath + " (or tus at " + endpoint + ") and its URL given as a file's content.",
		Data: map[string]any{"note": note, "max_bytes": s.MaxUploadBytes},
	}
	res.Meta = map[string]any{transfer.MetaUploadCapability: transfer.UploadCapability{
		Endpoint: endpoint, Token: token, ExpiresAt: exp.UTC().Format(time.RFC3339), MaxBytes: s.MaxUploadBytes,
	}}
	return res, nil
}

// Headers of the CORS answers to a view's tus requests.
var (
	capabilityMethods = "POST, HEAD, PATCH, DELETE, OPTIONS"
	capabilityHeaders = strings.Join([]string{"Tus-Resumable", "Upload-Length", "Upload-Metadata", "Upload-Offset",
		"Upload-Defer-Length", "Content-Type", transfer.HeaderUploadCapability}, ", ")
	capabilityExposed = strings.Join([]string{"Location", "Tus-Resumable", "Upload-Offset", "Upload-Length",
		"Upload-Expires", transfer.HeaderFileURL, transfer.HeaderFileURI}, ", ")
)

// Uploads routes the tus requests of an upload view (with an Origin,
// carrying a capability, or the preflight asking to send one) to tus with
// the capability's owner and CORS answers; every other request goes to
// next, the endpoint as it always was (a request for a Host that is not
// the agent's included: next refuses it, as DNS rebinding).
func (s *Views) Uploads(guard *httpguard.Origin, tus, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A sandboxed view says Origin: null; a host that gives its views
		// allow-same-origin on a sandbox origin of its own (as the
		// extension's web hosts do) sends that origin.
		if r.Header.Get("Origin") == "" || guard.HostRefusal(r) != "" {
			next.ServeHTTP(w, r) // which refuses a rebound Host
			return
		}
		token := r.Header.Get(transfer.HeaderUploadCapability)
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" &&
			slices.ContainsFunc(strings.Split(r.Header.Get("Access-Control-Request-Headers"), ","), func(h string) bool {
				return strings.EqualFold(strings.TrimSpace(h), transfer.HeaderUploadCapability)
			})
		if token == "" && !preflight {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*") // no credentials are sent, or accepted
		h.Set("Access-Control-Expose-Headers", capabilityExposed)
		h.Add("Vary", "Origin")
		if preflight {
			h.Set("Access-Control-Allow-Methods", capabilityMethods)
			h.Set("Access-Control-Allow-Headers", capabilityHeaders)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		c, err := s.Signer.Verify(token)
		if err != nil || c.Area != capabilityArea || c.Owner == "" {
			reason := "the upload capability is not one this agent issued"
			if err != nil {
				reason = "upload capability refused: " + err.Error()
			}
			httpjson.WriteError(w, http.StatusForbidden, reason+"; call "+AttachToolName+" again for a fresh upload view")
			return
		}
		ctx := callers.WithOwner(r.Context(), c.Owner)
		tus.ServeHTTP(&adoptWriter{ResponseWriter: w, ctx: ctx, views: s, owner: c.Owner, grant: c.FileID}, r.WithContext(ctx))
	})
}

// adoptWriter adds to a view's tus answer that names a staged file
// (File-Url: the completing PATCH, a HEAD or POST of a complete upload)
// the file's reference (transfer.HeaderFileURI), from Config.Adopt. A file
// that cannot be adopted gets no reference, and the view names it by name
// alone.
type adoptWriter struct {
	http.ResponseWriter
	ctx          context.Context
	views        *Views
	owner, grant string
	wrote        bool
}

func (a *adoptWriter) WriteHeader(code int) {
	if !a.wrote && code >= http.StatusOK { // an informational answer is not the final one
		a.wrote = true
		h := a.Header()
		if u := h.Get(transfer.HeaderFileURL); u != "" && code < http.StatusMultipleChoices && a.views.Adopt != nil {
			if ref, err := a.views.Adopt(a.ctx, a.owner, a.grant, u); err == nil {
				h.Set(transfer.HeaderFileURI, ref)
			}
		}
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *adoptWriter) Write(b []byte) (int, error) {
	if !a.wrote {
		a.WriteHeader(http.StatusOK)
	}
	return a.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (a *adoptWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

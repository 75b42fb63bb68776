// Package httpjson writes the JSON answers of the server's HTTP routes: the
// contract's error body ({"error": msg}, transfer.Error) and any other JSON
// value, with its length and nosniff. It is a leaf every server package
// may import (the file routes, agentcore's guards and handlers).
package httpjson

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/transfer"
)

// WriteError answers code with the JSON error body of the contract
// ({"error": msg}, transfer.Error), dropping headers set for a
// file that is not being sent after all.
func WriteError(w http.ResponseWriter, code int, msg string) {
	writeError(w, code, transfer.Error{Error: msg})
}

// writeError answers code with body, without the headers of a file.
func writeError(w http.ResponseWriter, code int, body transfer.Error) {
	h := w.Header()
	for _, k := range []string{"Content-Disposition", "ETag", "Last-Modified", "Content-Encoding", "Content-Length"} {
		h.Del(k)
	}
	h.Set("Cache-Control", "no-store")
	WriteJSON(w, code, body)
}

// WriteFailure answers a failure of the server's own met while doing what
// ("store the upload"): the cause in words and a reason code (fault), with
// the status that fits it: 507 for a full store, 503 with Retry-After for
// one that did not answer or takes no writes, and for an identity provider
// that could not be read, 500 for anything else. The
// details of err go to the caller's log, never here.
func WriteFailure(w http.ResponseWriter, what string, err error) {
	f := fault.Of(what, err)
	code := http.StatusInternalServerError
	switch f.Reason {
	case fault.StorageFull:
		code = http.StatusInsufficientStorage
	case fault.StorageUnavailable, fault.StorageReadOnly, fault.IdentityProviderUnavailable:
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "5")
	}
	writeError(w, code, transfer.Error{Error: f.Words, Reason: f.Reason})
}

// WriteJSON answers code with v as JSON, with its length and nosniff: the
// one JSON writer of the server's routes.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"internal error: response not encodable"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

package attack

import (
	"net/http"
	"strings"
	"testing"
)

// Attack (SEP-2631 file URIs, no auth): the capability to a produced file
// travels in its URI (mcp-file://<host>/out/<id>?token=…), as it does in a
// download URL, so whoever holds the FileValue resolves it — anonymous,
// without agentura's owner handle. Nobody else does: another anonymous
// caller who learns the bare URI (the token cut off), or who puts her own
// file's token on alice's id, gets neither a download descriptor from
// files/authorizeDownload nor the file as a tool input, and the answer is
// the one for a file that never existed. (The round before, the URI bore
// no token and the owner handle was the capability; issue 37 moved it into
// the URI so that a host that knows nothing of agentura can fetch it.)
func TestAttackAnonymousFileURIOfAnotherScope(t *testing.T) {
	e := agents(t)
	produce := func() (uri, handle string) {
		t.Helper()
		params := map[string]any{"name": "archive_files", "arguments": map[string]any{
			"sources": []any{dataURI("secret.txt", []byte("alice's secret"))}, "name": "private"}}
		r, out := rpc(t, e.open, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		result, _ := out["result"].(map[string]any)
		sc, _ := result["structuredContent"].(map[string]any)
		files, _ := sc["files"].([]any) // archive_files answers a list
		var file map[string]any
		if len(files) > 0 {
			first, _ := files[0].(map[string]any)
			file, _ = first["file"].(map[string]any) // the FileValue
		}
		uri, _ = file["uri"].(string)
		meta, _ := result["_meta"].(map[string]any)
		handle, _ = meta["agentura/owner"].(string)
		if !strings.HasPrefix(uri, "mcp-file://") || !strings.Contains(uri, "?token=") || handle == "" {
			t.Fatalf("no file URI with its capability, or no owner handle, in the result: %v %s", sc, r)
		}
		return uri, handle
	}
	authorize := func(handle, uri string) map[string]any {
		t.Helper()
		params := map[string]any{"uri": uri}
		if handle != "" {
			params["_meta"] = map[string]any{"agentura/owner": handle}
		}
		_, out := rpc(t, e.open, "", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "files/authorizeDownload", "params": params})
		return out
	}
	uri, _ := produce()
	own, mallory := produce() // mallory has a file, and a token, of her own
	bare, _, _ := strings.Cut(uri, "?token=")
	_, ownToken, _ := strings.Cut(own, "?token=")
	missingBare := bare[:strings.LastIndex(bare, "/")+1] + "01a23798-0000-7000-8000-000000000000"
	for _, stolen := range []struct{ name, uri, missing string }{
		{"bare URI", bare, missingBare},
		{"her own token on alice's id", bare + "?token=" + ownToken, missingBare + "?token=" + ownToken},
	} {
		want, _ := authorize(mallory, stolen.missing)["error"].(map[string]any)
		if want == nil {
			t.Fatalf("authorizeDownload of a file that never existed (%s) did not fail", stolen.name)
		}
		for _, h := range []string{mallory, ""} {
			out := authorize(h, stolen.uri)
			got, _ := out["error"].(map[string]any)
			if got == nil {
				t.Fatalf("mallory (%s, handle %v) got a download descriptor of alice's output: %v", stolen.name, h != "", out)
			}
			if got["code"] != want["code"] || strings.ReplaceAll(got["message"].(string), bare, missingBare) != want["message"] {
				t.Errorf("the refusal (%s) tells alice's file from a missing one:\n got %v\nwant %v", stolen.name, got, want)
			}
			params := map[string]any{"name": "inspect_file", "arguments": map[string]any{"source": stolen.uri}}
			if h != "" {
				params["_meta"] = map[string]any{"agentura/owner": h}
			}
			r, res := rpc(t, e.open, "", map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params})
			if result, _ := res["result"].(map[string]any); result == nil || result["isError"] != true || strings.Contains(string(r.body), "alice's secret") {
				t.Errorf("mallory (%s) fed alice's output to a tool: %s", stolen.name, r)
			}
		}
	}
	// Whoever holds the whole FileValue — here a caller with no handle at
	// all — gets a descriptor whose URL serves the file.
	out := authorize("", uri)
	result, _ := out["result"].(map[string]any)
	download, _ := result["download"].(map[string]any)
	link, _ := download["url"].(string)
	if link == "" {
		t.Fatalf("authorizeDownload of the FileValue's own URI: %v", out)
	}
	status(t, do(t, http.MethodGet, link, nil), http.StatusOK)
}

package attack

import (
	"net/http"
	"strings"
	"testing"
)

// Attack (SEP-2631 file URIs, no auth): a produced file's URI
// mcp-file://<host>/out/<id> that leaks to another anonymous caller gets it
// neither a download descriptor from files/authorizeDownload nor the file
// as a tool input — the answer is the one for a file that never existed —,
// while the caller that produced it, by its owner handle, still gets both.
func TestAttackAnonymousFileURIOfAnotherScope(t *testing.T) {
	e := agents(t)
	produce := func(handle string) (uri, newHandle string) {
		t.Helper()
		params := map[string]any{"name": "archive_files", "arguments": map[string]any{
			"sources": []any{dataURI("secret.txt", []byte("alice's secret"))}, "name": "private"}}
		if handle != "" {
			params["_meta"] = map[string]any{"agentura/owner": handle}
		}
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
		newHandle, _ = meta["agentura/owner"].(string)
		if !strings.HasPrefix(uri, "mcp-file://") || newHandle == "" {
			t.Fatalf("no file URI or owner handle in the result: %v %s", sc, r)
		}
		return uri, newHandle
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
	uri, alice := produce("")
	_, mallory := produce("")
	missing := uri[:strings.LastIndex(uri, "/")+1] + "01a23798-0000-7000-8000-000000000000"
	want, _ := authorize(mallory, missing)["error"].(map[string]any)
	if want == nil {
		t.Fatal("authorizeDownload of a file that never existed did not fail")
	}
	for _, h := range []string{mallory, ""} {
		out := authorize(h, uri)
		got, _ := out["error"].(map[string]any)
		if got == nil {
			t.Fatalf("mallory (handle %v) got a download descriptor of alice's output: %v", h != "", out)
		}
		if got["code"] != want["code"] || strings.ReplaceAll(got["message"].(string), uri, missing) != want["message"] {
			t.Errorf("the refusal tells alice's file from a missing one:\n got %v\nwant %v", got, want)
		}
		params := map[string]any{"name": "inspect_file", "arguments": map[string]any{"source": uri}}
		if h != "" {
			params["_meta"] = map[string]any{"agentura/owner": h}
		}
		r, res := rpc(t, e.open, "", map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params})
		if result, _ := res["result"].(map[string]any); result == nil || result["isError"] != true || strings.Contains(string(r.body), "alice's secret") {
			t.Errorf("mallory fed alice's output to a tool: %s", r)
		}
	}
	out := authorize(alice, uri)
	result, _ := out["result"].(map[string]any)
	download, _ := result["download"].(map[string]any)
	link, _ := download["url"].(string)
	if link == "" {
		t.Fatalf("alice's authorizeDownload of her own output: %v", out)
	}
	status(t, do(t, http.MethodGet, link, nil), http.StatusOK)
}

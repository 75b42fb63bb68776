package attack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// fileURI finds the first file URI of an agent's answer.
var fileURI = regexp.MustCompile(`mcp-file://[^"]+/out/[0-9a-f-]+`)

// The unclear rows of 2026-12-07 (fail closed, or harmless, but the answer
// was wrong), each now answered as docs/contract.md says.

// Two download URLs of one file minted in the same second were the same
// string, so revoking one revoked the other. Now they differ, and revoking
// one leaves the other working.
func TestUnclearTwoURLsOfOneSecond(t *testing.T) {
	a := mcptest.StartAgent(t, fileagentBinary(t), "AGENT_SIGNING_KEY="+signingKey, "AGENT_MCP_STATELESS=true", "AGENT_RATE_LIMIT=0")
	defer a.Stop(t)
	c := mcptest.NewSessionless(a.URL + "/mcp")
	res := mcptest.Call[json.RawMessage](t, c, "tools/call", map[string]any{"name": "archive_files", "arguments": map[string]any{"sources": []string{"data:,x"}, "name": "two"}})
	uri := fileURI.FindString(string(res))
	if uri == "" {
		t.Fatalf("archive_files gave no file URI: %s", res)
	}
	type download struct {
		Download struct {
			URL string `json:"url"`
		} `json:"download"`
	}
	var urls []string
	began := time.Now()
	for range 2 {
		d := mcptest.Call[download](t, c, "files/authorizeDownload", map[string]any{"uri": uri})
		urls = append(urls, d.Download.URL)
	}
	if time.Since(began) < time.Second && urls[0] == urls[1] {
		t.Fatalf("two download URLs of one file minted within a second are one string: %s", urls[0])
	}
	status(t, revokeReq(t, a.URL, urls[0]), http.StatusNoContent)
	status(t, do(t, http.MethodGet, urls[0], nil), http.StatusForbidden)
	status(t, do(t, http.MethodGet, urls[1], nil), http.StatusOK)
}

// files/authorizeUpload declared image/jpeg and the PUT sent a PNG: 201,
// kept as image/png (a type the composer takes). docs/contract.md says
// bytes whose detected type is not what was declared are removed: now 415
// typeMismatch, and the file URI names nothing.
func TestUnclearUploadOfAnotherType(t *testing.T) {
	a := mcptest.StartAgent(t, binary(t, "github.com/agentura/agentura/cmd/composer-agent"), "AGENT_SIGNING_KEY="+signingKey, "AGENT_MCP_STATELESS=true")
	defer a.Stop(t)
	var pic bytes.Buffer
	png.Encode(&pic, image.NewGray(image.Rect(0, 0, 4, 4)))
	c := mcptest.NewSessionless(a.URL + "/mcp")
	type authorized struct {
		File struct {
			URI string `json:"uri"`
		} `json:"file"`
		Upload struct {
			URL string `json:"url"`
		} `json:"upload"`
	}
	up := mcptest.Call[authorized](t, c, "files/authorizeUpload", map[string]any{"name": "photo.jpg", "mimeType": "image/jpeg", "size": pic.Len()})
	r := do(t, http.MethodPut, up.Upload.URL, bytes.NewReader(pic.Bytes()))
	var refusal struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	json.Unmarshal(r.body, &refusal)
	if r.status != http.StatusUnsupportedMediaType || refusal.Reason != "typeMismatch" || !strings.Contains(refusal.Error, "image/png") {
		t.Fatalf("a PNG sent for a declared JPEG: %s; want 415 typeMismatch naming what was sent", r)
	}
	noLeak(t, r)
	res := mcptest.Call[struct {
		IsError bool `json:"isError"`
	}](t, c, "tools/call", map[string]any{"name": "compose_document", "arguments": map[string]any{
		"markdown": "![p](photo.jpg)", "format": "md", "embeds": []any{map[string]any{"name": "photo.jpg", "content": up.File.URI}}}})
	if !res.IsError {
		t.Errorf("the refused upload's file URI was taken as an input")
	}
}

// Revocations were capped per client address only: 15,000 from 16
// addresses doubled an idle agent's CPU. The anonymous owner's addresses
// together now have at most 4 times the cap: with a cap of 5, four
// addresses revoke 5 each and a fifth is refused (429, saying why).
func TestUnclearRevocationsCappedForAllAddresses(t *testing.T) {
	const max = 5
	data := t.TempDir()
	a := mcptest.StartAgent(t, fileagentBinary(t), "AGENT_SIGNING_KEY="+signingKey, "AGENT_RATE_LIMIT=0",
		fmt.Sprintf("AGENT_MAX_REVOCATIONS=%d", max), "AGENT_DATA_DIR="+data)
	defer a.Stop(t)
	from := func(last byte) *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{
			LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, last)}}).DialContext}}
	}
	var urls []string
	for i := range 4*max + 1 {
		r, u := upload(t, a, "", fmt.Sprintf("f%d.txt", i), []byte("x"))
		status(t, r, http.StatusCreated)
		urls = append(urls, u)
	}
	for i, u := range urls[:4*max] {
		status(t, revokeVia(t, from(byte(2+i/max)), a.URL, u), http.StatusNoContent)
	}
	r := revokeVia(t, from(9), a.URL, urls[4*max])
	if r.status != http.StatusTooManyRequests || !strings.Contains(string(r.body), "unauthenticated callers together") || r.header.Get("Retry-After") == "" {
		t.Errorf("a fresh address past the anonymous owner's cap: %s; want 429 naming the shared cap", r)
	}
	if n := revocationRecords(t, data); n != 4*max {
		t.Errorf("%d revocation records, want %d", n, 4*max)
	}
	status(t, do(t, http.MethodGet, urls[4*max], nil), http.StatusOK)
}

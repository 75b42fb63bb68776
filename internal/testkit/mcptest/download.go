package mcptest

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/agentura/agentura/transfer"
)

// Get GETs rawURL with the extra header and returns the response with its
// body read, whatever its status; a transport error fails the test.
func Get(t testing.TB, rawURL string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", transfer.Redact(rawURL), err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", transfer.Redact(rawURL), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", transfer.Redact(rawURL), err)
	}
	return resp, body
}

// Download GETs a signed download URL and returns the body; any answer but
// 200 fails the test.
func Download(t testing.TB, rawURL string) []byte {
	t.Helper()
	resp, body := Get(t, rawURL, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %.300s", transfer.Redact(rawURL), resp.Status, body)
	}
	return body
}

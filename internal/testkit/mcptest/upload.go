package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// Upload stages data at the agent's POST /uploads under name and returns
// the signed URL it answers, a file's content by URL.
func Upload(t testing.TB, agentURL, name string, data []byte) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, agentURL+"/uploads", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Filename", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s/uploads: %v", agentURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var up struct {
		URL string `json:"url"`
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &up) != nil || up.URL == "" {
		t.Fatalf("POST %s/uploads: %s: %.300s", agentURL, resp.Status, body)
	}
	return up.URL
}

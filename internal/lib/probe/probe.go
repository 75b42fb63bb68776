// Package probe is the readiness check of a service on this host or
// network: one GET, no proxy, 200 or an error that says what answered.
package probe

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentura/agentura/transfer"
)

// Timeout bounds one Ready.
const Timeout = 5 * time.Second

// Ready GETs rawURL and returns nil when it answers 200 within Timeout,
// else an error naming the URL and, for an answer, its status and the start
// of its body. It never uses a proxy: it is a health check of a service on
// this host or network (an agent's /readyz from `--healthcheck`, the S3
// image's health path), run where there is no curl.
func Ready(ctx context.Context, rawURL string) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fmt.Errorf("bad URL %q: %w", transfer.Redact(rawURL), err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("no answer from %s: %w", transfer.Redact(rawURL), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", transfer.Redact(rawURL), resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

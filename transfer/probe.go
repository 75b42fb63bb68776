package transfer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ProbeTimeout bounds one Probe.
const ProbeTimeout = 5 * time.Second

// Probe GETs rawURL and returns nil when it answers 200 within ProbeTimeout,
// else an error naming the URL and, for an answer, its status and the start
// of its body. It never uses a proxy: it is a health check of a service on
// this host or network (an agent's /readyz from `--healthcheck`, the S3
// image's health path), run where there is no curl.
func Probe(ctx context.Context, rawURL string) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fmt.Errorf("bad URL %q: %w", Redact(rawURL), err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("no answer from %s: %w", Redact(rawURL), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", Redact(rawURL), resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// Command httpprobe is the health check of images that have no shell and no
// curl (the versitygw image of deploy/docker-compose.scale.yml runs on
// scratch): `httpprobe URL` exits 0 when a GET of URL answers 200 within five
// seconds, and 1 with the reason on stderr otherwise. It never uses a proxy.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: httpprobe URL (exits 0 when a GET of URL answers 200)")
		os.Exit(2)
	}
	if err := probe(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "httpprobe:", err)
		os.Exit(1)
	}
}

// probe GETs url and fails unless the answer is 200.
func probe(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("bad URL %q: %w", url, err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("no answer from %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// Command scaleload is the load test of the scale-out deployment: N clients
// each call compose_document (stateless MCP, no session) through the load
// balancer and download the file it returns, over and over, for a bounded
// time and count. Every download is checked byte for byte against the copy
// the answer embeds (AGENT_EMBED_MAX_BYTES must allow the ~4 KiB document,
// as its default does). It prints requests per second and the p50/p99 latency of one
// compose → download round, and exits 1 if any round failed.
//
//	go run ./internal/cmd/scaleload -url https://localhost:8443 -cacert build/scale-tls/ca.pem -clients 8 -duration 60s
//
// It talks to loopback addresses only: the URL's host must be localhost or
// a loopback IP.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of a run, whatever the flags say.
const (
	maxDuration = 10 * time.Minute
	maxClients  = 64
	maxRounds   = 1_000_000
)

func main() {
	var cfg config
	flag.StringVar(&cfg.base, "url", "https://localhost:8443", "base URL of the balancer (loopback only)")
	flag.StringVar(&cfg.caFile, "cacert", "", "PEM file of the CA that signed the balancer's certificate (for https)")
	flag.IntVar(&cfg.clients, "clients", 8, fmt.Sprintf("concurrent clients (at most %d)", maxClients))
	flag.DurationVar(&cfg.duration, "duration", 60*time.Second, fmt.Sprintf("how long to run (at most %v)", maxDuration))
	flag.IntVar(&cfg.rounds, "rounds", 100_000, fmt.Sprintf("stop after this many compose → download rounds (at most %d)", maxRounds))
	maxFailed := flag.Float64("max-failed-percent", 0, "exit 1 when more than this share of rounds failed (0: any failure); every failure is printed either way")
	flag.Parse()
	rep, err := run(context.Background(), cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scaleload:", err)
		os.Exit(2)
	}
	fmt.Println(rep)
	if float64(rep.failed) > float64(rep.rounds)**maxFailed/100 {
		os.Exit(1)
	}
}

// config is what a run is told.
type config struct {
	base     string
	caFile   string
	clients  int
	duration time.Duration
	rounds   int
}

// report is what a run measured.
type report struct {
	rounds, failed int
	bytes          int64
	elapsed        time.Duration
	latencies      []time.Duration // of successful rounds, sorted
	firstErrors    []string
}

func (r report) String() string {
	var b strings.Builder
	rate := float64(r.rounds) / r.elapsed.Seconds()
	fmt.Fprintf(&b, "rounds %d (compose + download), failed %d, %.1f rounds/s = %.1f requests/s over %v, %d bytes downloaded",
		r.rounds, r.failed, rate, 2*rate, r.elapsed.Round(time.Millisecond), r.bytes)
	if n := len(r.latencies); n > 0 {
		fmt.Fprintf(&b, "\nlatency of a round: p50 %v, p99 %v, max %v",
			r.latencies[n/2].Round(time.Millisecond), r.latencies[(n*99)/100].Round(time.Millisecond), r.latencies[n-1].Round(time.Millisecond))
	}
	for _, e := range r.firstErrors {
		b.WriteString("\nfailure: " + e)
	}
	return b.String()
}

// run checks cfg and runs the clients until the time or the count is up.
func run(ctx context.Context, cfg config, log io.Writer) (report, error) {
	if cfg.clients < 1 || cfg.clients > maxClients || cfg.duration <= 0 || cfg.duration > maxDuration || cfg.rounds < 1 || cfg.rounds > maxRounds {
		return report{}, fmt.Errorf("-clients must be 1..%d, -duration up to %v, -rounds 1..%d", maxClients, maxDuration, maxRounds)
	}
	u, err := url.Parse(cfg.base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return report{}, fmt.Errorf("-url %q is not an http(s) URL", cfg.base)
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return report{}, fmt.Errorf("-url %q: this load test talks to loopback addresses only (localhost, 127.0.0.1, ::1)", cfg.base)
	}
	hc, err := httpClient(cfg.caFile, cfg.clients)
	if err != nil {
		return report{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.duration)
	defer cancel()
	var (
		mu    sync.Mutex
		rep   report
		taken atomic.Int64
		wg    sync.WaitGroup
	)
	start := time.Now()
	for c := range cfg.clients {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil && taken.Add(1) <= int64(cfg.rounds); n++ {
				began := time.Now()
				size, err := round(ctx, hc, strings.TrimRight(cfg.base, "/"), fmt.Sprintf("client %d round %d", c, n))
				if ctx.Err() != nil && err != nil {
					return // the time is up mid-round: not counted
				}
				mu.Lock()
				rep.rounds++
				if err != nil {
					rep.failed++
					if len(rep.firstErrors) < 10 {
						rep.firstErrors = append(rep.firstErrors, err.Error())
						fmt.Fprintf(log, "scaleload: %v\n", err)
					}
				} else {
					rep.bytes += size
					rep.latencies = append(rep.latencies, time.Since(began))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	rep.elapsed = time.Since(start)
	slices.Sort(rep.latencies)
	return rep, nil
}

// round composes a Markdown document holding tag and downloads it: the
// bytes must be the document asked for.
func round(ctx context.Context, hc *http.Client, base, tag string) (int64, error) {
	markdown := "# Load test\n\n" + tag + "\n\n" + strings.Repeat("Some text to carry. ", 200) + "\n"
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "compose_document", "arguments": map[string]any{"markdown": markdown, "format": "md", "filename": "load.md"}}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	raw, err := do(hc, req)
	if err != nil {
		return 0, fmt.Errorf("%s: compose: %w", tag, err)
	}
	file, err := produced(raw)
	if err != nil {
		return 0, fmt.Errorf("%s: compose: %w", tag, err)
	}
	if !strings.HasPrefix(file.URL, base+"/files/") {
		return 0, fmt.Errorf("%s: the download URL %q is not under %s/files/", tag, redact(file.URL), base)
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, file.URL, nil)
	got, err := do(hc, req)
	if err != nil {
		return 0, fmt.Errorf("%s: download: %w", tag, err)
	}
	if !bytes.Equal(got, file.embedded) || !bytes.Contains(got, []byte(tag)) {
		return 0, fmt.Errorf("%s: download: %d bytes differ from the %d the answer embeds: corrupt", tag, len(got), len(file.embedded))
	}
	return int64(len(got)), nil
}

// do sends req and returns the body of a 200 answer.
func do(hc *http.Client, req *http.Request) ([]byte, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %s: %.200s", req.Method, redact(req.URL.String()), resp.Status, b)
	}
	return b, nil
}

// producedFile is the one file a compose_document result names.
type producedFile struct {
	URL      string `json:"download_url"`
	Size     int64  `json:"size_bytes"`
	embedded []byte // the content the answer embeds
}

// produced reads the file out of a tools/call answer, JSON or one SSE event.
func produced(raw []byte) (producedFile, error) {
	msg := raw
	for _, line := range strings.Split(string(raw), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			msg = []byte(data)
		}
	}
	var out struct {
		Result *struct {
			IsError    bool         `json:"isError"`
			Structured producedFile `json:"structuredContent"`
			Content    []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				Resource *struct {
					URI  string  `json:"uri"`
					Text *string `json:"text"`
					Blob []byte  `json:"blob"`
				} `json:"resource"`
			} `json:"content"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(msg, &out); err != nil {
		return producedFile{}, fmt.Errorf("answer is not JSON-RPC: %w: %.200s", err, raw)
	}
	switch {
	case out.Error != nil:
		return producedFile{}, errors.New(out.Error.Message)
	case out.Result != nil && out.Result.IsError:
		var text []string
		for _, c := range out.Result.Content {
			if c.Type == "text" {
				text = append(text, c.Text)
			}
		}
		return producedFile{}, fmt.Errorf("the tool failed: %.500s", strings.Join(text, "; "))
	case out.Result == nil || out.Result.Structured.URL == "":
		return producedFile{}, fmt.Errorf("no file in the answer: %.300s", raw)
	}
	f := out.Result.Structured
	for _, c := range out.Result.Content {
		switch r := c.Resource; {
		case c.Type != "resource" || r == nil || r.URI != f.URL:
		case r.Text != nil:
			f.embedded = []byte(*r.Text)
		default:
			f.embedded = r.Blob
		}
	}
	if f.embedded == nil {
		return producedFile{}, errors.New("the answer embeds no copy of the file to check the download against; set AGENT_EMBED_MAX_BYTES to 65536 (its default) or more")
	}
	return f, nil
}

// httpClient trusts caFile's CA (besides the system's) and keeps a
// connection per client.
func httpClient(caFile string, clients int) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = clients
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("-cacert: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-cacert %s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: time.Minute}, nil
}

// redact cuts the signed token out of a download URL for messages.
func redact(u string) string {
	if i := strings.Index(u, "?"); i >= 0 {
		return u[:i] + "?…"
	}
	return u
}

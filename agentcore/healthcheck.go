package agentcore

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// HealthcheckTimeout bounds one run of Healthcheck.
const HealthcheckTimeout = 5 * time.Second

// Healthcheck asks the agent listening on addr (an AGENT_ADDR such as ":8001")
// for /readyz and returns nil when it answers 200. A wildcard or empty host
// is reached on the loopback address. It is what `<agent> --healthcheck`
// runs, so that an image without curl or wget (a scratch image) can still
// carry a Docker HEALTHCHECK.
func Healthcheck(ctx context.Context, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("healthcheck: AGENT_ADDR %q is not host:port: %w", addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/readyz"
	ctx, cancel := context.WithTimeout(ctx, HealthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	// No proxy: the agent is on this host, whatever HTTP_PROXY says.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: the agent does not answer at %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// runHealthcheck is Main's --healthcheck: exit code 0 when ready, 1 when not.
func runHealthcheck(addr string) int {
	if err := Healthcheck(context.Background(), addr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

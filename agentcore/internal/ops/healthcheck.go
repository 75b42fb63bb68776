package ops

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/agentura/agentura/internal/lib/probe"
)

// Healthcheck asks the agent listening on addr (an AGENT_ADDR such as ":8001")
// for /readyz and returns nil when it answers 200 (probe.Ready: no proxy,
// probe.Timeout). A wildcard or empty host is reached on the loopback
// address. It is what `<agent> --healthcheck` runs, so that an image without
// curl or wget (a scratch image) can still carry a Docker HEALTHCHECK.
func Healthcheck(ctx context.Context, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("healthcheck: AGENT_ADDR %q is not host:port: %w", addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	if err := probe.Ready(ctx, "http://"+net.JoinHostPort(host, port)+"/readyz"); err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	return nil
}

// RunHealthcheck is an agent's --healthcheck: exit code 0 when ready, 1 when not.
func RunHealthcheck(addr string) int {
	if err := Healthcheck(context.Background(), addr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

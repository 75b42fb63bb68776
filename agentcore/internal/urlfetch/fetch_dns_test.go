package urlfetch

import (
	"context"
	"errors"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestUnresolvedHostErrorNamesNoResolver: a URL input whose host does not
// resolve is refused with the host name and why, and not with the address
// of the agent's name server, which the net package's error carries
// ("lookup h on 10.0.0.2:53: no such host") and which reached the model.
// Both paths: a host the guard checks, and one on AGENT_FETCH_ALLOW_HOSTS.
func TestUnresolvedHostErrorNamesNoResolver(t *testing.T) {
	const host = "no-such-host.invalid"
	var servers []string
	if b, err := os.ReadFile("/etc/resolv.conf"); err == nil {
		for _, m := range regexp.MustCompile(`(?m)^nameserver\s+(\S+)`).FindAllStringSubmatch(string(b), -1) {
			servers = append(servers, m[1])
		}
	}
	for _, allow := range [][]string{nil, {host}} {
		f := New(allow, 20*time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		resp, err := f.Get(ctx, "http://"+host+"/file.pdf")
		cancel()
		if resp != nil {
			resp.Body.Close()
		}
		if err == nil {
			t.Fatalf("allow %v: %s resolved", allow, host)
		}
		msg := err.Error()
		if !strings.Contains(msg, "the host name "+host+" could not be resolved") {
			t.Errorf("allow %v: %s, want it to say the host name could not be resolved", allow, msg)
		}
		if strings.Contains(msg, ":53") || strings.Contains(msg, "lookup ") {
			t.Errorf("allow %v: %s names the resolver", allow, msg)
		}
		for _, s := range servers {
			if strings.Contains(msg, s) {
				t.Errorf("allow %v: %s names the name server %s", allow, msg, s)
			}
		}
		if _, ok := errors.AsType[*net.DNSError](err); !ok {
			t.Errorf("allow %v: the DNS error is not in the chain", allow)
		}
	}
}

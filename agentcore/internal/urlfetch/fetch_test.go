package urlfetch

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

func TestParsePeerURLs(t *testing.T) {
	got, err := ParsePeerURLs(" http://localhost:8001=http://ocr-agent:8001 , https://files.example.com/ocr/=http://ocr-agent:8001/,")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (PeerURL{"http://localhost:8001", "http://ocr-agent:8001"}) || got[1].Public != "https://files.example.com/ocr/" {
		t.Errorf("parsed %+v", got)
	}
	for _, bad := range []string{
		"http://localhost:8001",                        // no =
		"localhost:8001=http://ocr-agent:8001",         // public not absolute
		"http://localhost:8001=ocr-agent:8001",         // internal not absolute
		"http://localhost:8001=ftp://ocr-agent",        // not http(s)
		"http://localhost:8001?x=1=http://ocr-agent",   // query on the public base
		"http://localhost:8001=http://u:p@ocr-agent:1", // credentials
	} {
		if _, err := ParsePeerURLs(bad); err == nil {
			t.Errorf("ParsePeerURLs(%q) accepted it", bad)
		}
	}
}

func TestSSRFGuardCoversEmbeddedIPv4AndBracketedAllowances(t *testing.T) {
	for _, s := range []string{"::127.0.0.1", "2002:7f00:1::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"} {
		if blockedReason(netip.MustParseAddr(s)) == "" {
			t.Errorf("%s is not blocked", s)
		}
	}
	f := New([]string{"[::1]", " Example.internal:8443 "}, time.Second)
	if !f.allowed("[::1]:8080") || !f.allowed("example.internal:8443") || f.allowed("example.internal:9000") {
		t.Errorf("allow list = %v", f.allow)
	}
}

func TestBlockedAddresses(t *testing.T) {
	blocked := []string{"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
		"0.0.0.0", "::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "fd00:ec2::254", "fe80::1", "224.0.0.1", "::"}
	for _, s := range blocked {
		if blockedReason(netip.MustParseAddr(s)) == "" {
			t.Errorf("%s is not blocked", s)
		}
	}
	for _, s := range []string{"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "8.8.8.8"} {
		if r := blockedReason(netip.MustParseAddr(s)); r != "" {
			t.Errorf("%s is blocked as %s", s, r)
		}
	}
}

func TestPeerMapRewrite(t *testing.T) {
	m, err := compilePeers([]PeerURL{
		{"http://localhost:8001", "http://ocr-agent:8001"},
		{"https://agents.example.com/composer", "http://composer-agent:8002/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"http://localhost:8001/files/ab/scan.pdf?token=x.y.z":               "http://ocr-agent:8001/files/ab/scan.pdf?token=x.y.z",
		"HTTP://LOCALHOST:8001/files/ab":                                    "http://ocr-agent:8001/files/ab",
		"http://localhost:8001/files/ab/a%2Fb%20c.pdf?token=t":              "http://ocr-agent:8001/files/ab/a%2Fb%20c.pdf?token=t",
		"https://agents.example.com:443/composer/files/id/r.pdf?token=t":    "http://composer-agent:8002/files/id/r.pdf?token=t",
		"https://agents.example.com/composer":                               "http://composer-agent:8002",
		"https://agents.example.com/composerX/files/id":                     "https://agents.example.com/composerX/files/id", // not a path segment
		"http://localhost:8002/files/ab":                                    "http://localhost:8002/files/ab",                // another port
		"https://localhost:8001/files/ab":                                   "https://localhost:8001/files/ab",               // another scheme
		"http://evil.example.com/files/ab?u=http://localhost:8001/files/ab": "http://evil.example.com/files/ab?u=http://localhost:8001/files/ab",
	} {
		if got, _ := m.rewrite(in); got != want {
			t.Errorf("rewrite(%s) = %s, want %s", in, got, want)
		}
	}
}

// In a compose network each agent hands out URLs under the public base the
// host uses; AGENT_PEER_URLS tells its peer where that base really is.
func ExampleParsePeerURLs() {
	peers, err := ParsePeerURLs("http://localhost:8001=http://ocr-agent:8001,http://localhost:8002=http://composer-agent:8002")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range peers {
		fmt.Printf("%s/files/... is fetched from %s/files/...\n", p.Public, p.Internal)
	}
	_, err = ParsePeerURLs("http://localhost:8001")
	fmt.Println(err)
	// Output:
	// http://localhost:8001/files/... is fetched from http://ocr-agent:8001/files/...
	// http://localhost:8002/files/... is fetched from http://composer-agent:8002/files/...
	// "http://localhost:8001" is not PUBLIC=INTERNAL (for example http://localhost:8001=http://ocr-agent:8001)
}

package transfer

import (
	"net/url"
	"testing"
)

// The one origin rule, in one table: where a bearer token may go and which
// download URLs need no allow list.
func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
		why  string
	}{
		{"http://agent.example:8001", "http://agent.example:8001/files/x?token=t", true, "same scheme, host and port"},
		{"https://agent.example", "https://agent.example:443/x", true, "default https port written out"},
		{"http://agent.example", "http://agent.example:80/x", true, "default http port written out"},
		{"http://agent.example:", "http://agent.example/x", true, "an empty port is the default"},
		{"http://Agent.Example:8001", "HTTP://agent.EXAMPLE:8001/x", true, "scheme and host are case-insensitive"},
		{"http://[::1]:8001", "http://[0:0:0:0:0:0:0:1]:8001/x", true, "an IP literal compares in canonical form"},
		{"http://localhost:8001", "http://127.0.0.1:8001/x", true, "loopback names are one host"},
		{"http://localhost:8001", "http://[::1]:8001/x", true, "loopback names are one host (IPv6)"},
		{"http://127.0.0.1:8001", "http://LOCALHOST:8001/x", true, "loopback names, any case"},

		// Scheme and port.
		{"https://agent.example", "http://agent.example/x", false, "scheme downgrade"},
		{"https://agent.example", "http://agent.example:443/x", false, "http on the https port"},
		{"http://agent.example", "https://agent.example/x", false, "another scheme is another origin"},
		{"http://agent.example:8001", "http://agent.example:8002/x", false, "another port"},
		{"http://agent.example:8001", "http://agent.example/x", false, "a missing port is 80, not 8001"},
		{"http://agent.example", "http://agent.example:080/x", false, "a port is compared as written"},
		{"http://agent.example", "ftp://agent.example/x", false, "only http and https"},

		// Userinfo tricks.
		{"http://agent.example", "http://agent.example@evil.example/x", false, "user information naming the agent, host evil"},
		{"http://agent.example", "http://agent.example:80@evil.example/x", false, "user:password naming the agent's host:port"},
		{"http://agent.example", "http://user:pass@agent.example/x", false, "user information on the agent's own host"},
		{"http://user@agent.example", "http://agent.example/x", false, "user information in the origin itself"},
		{"http://agent.example", "http://evil.example#@agent.example/x", false, "a fragment that looks like user information"},
		{"http://agent.example", "http://evil.example\\@agent.example/x", false, "a backslash before @"},

		// Look-alikes.
		{"http://agent.example", "http://agent.example./x", false, "a trailing dot is another name"},
		{"http://agent.example.", "http://agent.example/x", false, "a trailing dot is another name (either side)"},
		{"http://bücher.example", "http://xn--bcher-kva.example/x", false, "punycode and Unicode spellings are not folded"},
		{"http://bücher.example", "http://bücher.example/x", true, "the same Unicode name"},
		{"http://localhost", "http://locaKhost/x", false, "the Kelvin sign is not a k"},
		{"http://agent.example", "http://agent.example.evil.example/x", false, "the agent's name as a prefix"},
		{"http://agent.example", "http://evilagent.example/x", false, "the agent's name as a suffix"},

		// Loopback aliases are exactly three names.
		{"http://localhost:8001", "http://127.0.0.2:8001/x", false, "another address of 127.0.0.0/8"},
		{"http://localhost:8001", "http://localhost.:8001/x", false, "localhost with a trailing dot"},
		{"http://127.0.0.1:8001", "http://[::ffff:127.0.0.1]:8001/x", false, "an IPv4-mapped IPv6 form"},
		{"http://127.0.0.1:8001", "http://2130706433:8001/x", false, "a decimal IPv4 form"},
		{"http://127.0.0.1:8001", "http://0x7f.1:8001/x", false, "a hex IPv4 form"},
		{"http://localhost:8001", "http://localhost:8002/x", false, "loopback aliases keep the port"},
		{"https://localhost:8001", "http://127.0.0.1:8001/x", false, "loopback aliases keep the scheme"},
	} {
		a, err := url.Parse(tc.a)
		if err != nil {
			t.Fatalf("%s: %v", tc.a, err)
		}
		b, err := url.Parse(tc.b)
		if err != nil {
			// A URL that does not parse is on no origin: nothing to compare.
			if tc.same {
				t.Errorf("%s: %q does not parse: %v", tc.why, tc.b, err)
			}
			continue
		}
		if got := SameOrigin(a, b); got != tc.same {
			t.Errorf("%s: SameOrigin(%q, %q) = %v, want %v", tc.why, tc.a, tc.b, got, tc.same)
		}
		if got := SameOrigin(b, a); got != tc.same {
			t.Errorf("%s: not symmetric: SameOrigin(%q, %q) = %v", tc.why, tc.b, tc.a, got)
		}
	}
	if SameOrigin(nil, &url.URL{Scheme: "http", Host: "x"}) || SameOrigin(&url.URL{Scheme: "http", Host: "x"}, nil) {
		t.Error("a nil URL is on an origin")
	}
	if SameOrigin(&url.URL{Scheme: "http"}, &url.URL{Scheme: "http"}) {
		t.Error("two URLs without a host are one origin")
	}
}

func TestHostAllowed(t *testing.T) {
	hosts := []string{" cdn.example ", "files.example:8443", "[::1]:9000", "", "Upper.Example"}
	for _, tc := range []struct {
		url   string
		allow bool
	}{
		{"http://cdn.example/x", true},
		{"https://cdn.example:9999/x", true}, // a bare host: any port
		{"https://files.example:8443/x", true},
		{"https://files.example/x", false}, // 443, not 8443
		{"http://[::1]:9000/x", true},
		{"http://[::1]:9001/x", false},
		{"http://localhost:9000/x", false}, // no loopback aliases in an allow list
		{"http://upper.example/x", true},
		{"http://u:p@cdn.example/x", false},
		{"http://cdn.example@evil.example/x", false},
		{"http://cdn.example./x", false},
		{"ftp://cdn.example/x", false},
		{"http://evil.example/x", false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := HostAllowed(hosts, u); got != tc.allow {
			t.Errorf("HostAllowed(%q) = %v, want %v", tc.url, got, tc.allow)
		}
	}
	if HostAllowed(nil, &url.URL{Scheme: "http", Host: "cdn.example"}) {
		t.Error("an empty list allows a host")
	}
}

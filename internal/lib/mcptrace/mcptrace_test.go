package mcptrace

import (
	"strings"
	"testing"
)

// Scrub keeps the reason and drops what a span must not hold: names and
// contents in quotes, URL queries (signed URLs' tokens), user information.
func TestScrub(t *testing.T) {
	for in, want := range map[string]string{
		`file "secret.pdf": unresolved file reference`:          `file "…": unresolved file reference`,
		`fetch https://agent/files/1/a.pdf?token=eyJabc failed`: `fetch https://agent/files/1/a.pdf?… failed`,
		`read https://user:pw@host/x: 403`:                      `read https://REDACTED@host/x: 403`,
		`bad token=abc.def in the query`:                        `bad token=… in the query`,
		`an unpaired "quote and the rest`:                       `an unpaired "…"`,
		`no secrets here`:                                       `no secrets here`,
	} {
		if got := Scrub(in); got != want {
			t.Errorf("Scrub(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("é", maxStatus)
	if got := Scrub(long); len(got) > maxStatus+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("Scrub of %d bytes: %d bytes", len(long), len(got))
	}
}

// The carrier reads and writes string members of _meta only.
func TestMetaCarrier(t *testing.T) {
	m := MetaCarrier{"traceparent": "00-x", "n": 3}
	if m.Get("traceparent") != "00-x" || m.Get("n") != "" || m.Get("absent") != "" {
		t.Errorf("Get: %v", m)
	}
	m.Set("baggage", "k=v")
	if m["baggage"] != "k=v" || len(m.Keys()) != 3 {
		t.Errorf("Set/Keys: %v", m)
	}
}

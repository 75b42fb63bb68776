package client

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// heldUnits with rewriteEvent passes a stream on byte for byte where fn changes nothing
// (comments, CRLF lines, ids, several data lines, an unfinished last
// event), puts fn's data in the event where it does (in a last event cut
// off before its blank line too), and
// lets the rest of a stream pass untouched from an event over its limit.
func TestSSEEventsRewritesOnlyWhatChanges(t *testing.T) {
	upper := func(b []byte) ([]byte, bool) {
		if !bytes.HasPrefix(b, []byte("change")) {
			return b, false
		}
		return bytes.ToUpper(b), true
	}
	read := func(in string, limit int64) string {
		s := &heldUnits{rc: io.NopCloser(strings.NewReader(in)), max: limit, blankEnds: true, each: rewriteEvent(upper)}
		s.chunk = make([]byte, 7) // events split across reads
		out, err := io.ReadAll(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	same := ": ping\n\nevent: message\r\nid: 1\r\ndata: keep\r\ndata: this\r\n\r\nretry: 5\n\ndata: unfinished"
	if got := read(same, maxSSEEvent); got != same {
		t.Errorf("a stream fn leaves alone:\n%q\nwant it as it came:\n%q", got, same)
	}
	in := "id: 2\ndata: change\ndata: me\n\ndata: keep\n\n"
	if got, want := read(in, maxSSEEvent), "id: 2\ndata: CHANGE\ndata: ME\n\ndata: keep\n\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// An event the stream ends in, without its blank line, is one the
	// go-sdk reads: it is rewritten too, whether its last line ends or not.
	for _, cut := range []string{"data: keep\n\nid: 3\ndata: change", "data: keep\n\nid: 3\ndata: change\n", "data: keep\n\nid: 3\ndata: change\r"} {
		if got, want := read(cut, maxSSEEvent), "data: keep\n\nid: 3\ndata: CHANGE\n"; got != want {
			t.Errorf("a stream cut off in an event: %q, want %q", got, want)
		}
	}
	big := "data: change " + strings.Repeat("x", 100) + "\n\ndata: change too\n\n"
	if got := read(big, 64); got != big {
		t.Errorf("a stream with an event over the limit: %q, want it untouched", got)
	}
}

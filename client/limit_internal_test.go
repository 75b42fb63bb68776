package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// chunked reads its text a few bytes at a time, so that units are split
// across reads.
func chunked(s string) io.ReadCloser {
	return io.NopCloser(iotest.HalfReader(iotest.OneByteReader(strings.NewReader(s))))
}

// SSE events pass as they came, whole, however the reads split them; an
// event over the cap (its lines, newlines counted) is replaced by what over
// gives and ends the stream, an event of exactly the cap passes, and the
// unfinished event a stream ends in passes.
func TestHeldEvents(t *testing.T) {
	read := func(in string, max int64) (string, error) {
		h := &heldUnits{rc: chunked(in), max: max, blankEnds: true, over: func(begin []byte) ([]byte, error) {
			if int64(len(begin)) <= max {
				t.Errorf("over called with %d bytes, not over the cap of %d", len(begin), max)
			}
			return []byte("data: STAND-IN\n\n"), io.EOF
		}}
		out, err := io.ReadAll(h)
		return string(out), err
	}
	small := ": ping\n\nevent: message\r\nid: 1\r\ndata: a\r\ndata: b\r\n\r\ndata: unfinished"
	if got, err := read(small, 64); got != small || err != nil {
		t.Errorf("events under the cap: %q, %v; want them as they came", got, err)
	}
	exact := "data: 0123456789\n\n" // 18 bytes
	if got, _ := read(exact+exact, 18); got != exact+exact {
		t.Errorf("events of exactly the cap: %q, want them as they came", got)
	}
	big := "data: " + strings.Repeat("x", 100) + "\n\n"
	if got, _ := read(exact+big+exact, 18); got != exact+"data: STAND-IN\n\n" {
		t.Errorf("an event over the cap: %q, want the events before it, the stand-in, and nothing after", got)
	}
	// Many lines, none over the cap: the event is.
	lines := strings.Repeat("data: 0123456789\n", 10) + "\n"
	if got, _ := read(lines, 100); got != "data: STAND-IN\n\n" {
		t.Errorf("an event of many short lines over the cap: %q", got)
	}
}

// A line over the cap is dropped as it comes (an endless one too, holding
// no more than about the cap) and what over gives goes on in its place;
// lines under it pass, one per Read.
func TestHeldLines(t *testing.T) {
	newLines := func(r io.Reader, max int64) *heldUnits {
		return &heldUnits{rc: io.NopCloser(r), max: max, over: func(begin []byte) ([]byte, error) {
			return []byte("STAND-IN\n"), nil
		}}
	}
	in := "short\n" + strings.Repeat("x", 50) + "\n" + "0123456789\n" + strings.Repeat("y", 11) + "\nlast"
	h := newLines(chunked(in), 11)
	var got []string
	buf := make([]byte, 100)
	for {
		n, err := h.Read(buf)
		if n > 0 {
			got = append(got, string(buf[:n]))
		}
		if err != nil {
			break
		}
	}
	want := []string{"short\n", "STAND-IN\n", "0123456789\n", "STAND-IN\n", "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("reads %q, want %q", got, want)
	}

	// An endless line: the stand-in comes, then reading goes on dropping
	// what comes, within the cap and a read's worth.
	endless := &endlessReader{}
	h = newLines(endless, 1<<20)
	if n, err := h.Read(buf); string(buf[:n]) != "STAND-IN\n" || err != nil {
		t.Fatalf("first read of an endless line: %q, %v", buf[:n], err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Read(buf) // drops the rest of the line until endlessReader stops
	}()
	time.Sleep(50 * time.Millisecond)
	endless.stop()
	<-done
	if endless.read() < 4<<20 {
		t.Fatalf("only %d bytes of the endless line were read", endless.read())
	}
	held := 0
	for _, p := range append(h.unit, h.ready...) {
		held += cap(p)
	}
	if held > 1<<20+64<<10 {
		t.Errorf("%d bytes held reading an endless line, over the cap", held)
	}
}

// endlessReader gives "z" until stopped (and 4 MiB are read), then io.EOF.
type endlessReader struct {
	mu      sync.Mutex
	stopped bool
	n       int64
}

func (e *endlessReader) Read(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped && e.n > 4<<20 {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = 'z'
	}
	e.n += int64(len(p))
	return len(p), nil
}

func (e *endlessReader) stop() {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
}

func (e *endlessReader) read() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

// A JSON body over the cap, by its Content-Length or as it comes, is
// replaced by the error answer to the call; one at the cap passes.
func TestWholeBody(t *testing.T) {
	over := overflow{server: "http://agent/mcp", max: 10, call: rpcCall{id: json.RawMessage(`7`), method: "tools/list"}}
	read := func(body string, length int64) string {
		out, err := io.ReadAll(&wholeBody{rc: chunked(body), length: length, over: over})
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if got := read("0123456789", -1); got != "0123456789" {
		t.Errorf("a body of the cap: %q", got)
	}
	for _, length := range []int64{-1, 11} {
		got := read("0123456789A", length)
		var m struct {
			ID    int `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(got), &m) != nil || m.ID != 7 || m.Error.Code != codeMessageTooLarge ||
			!strings.Contains(m.Error.Message, "the answer of http://agent/mcp to tools/list passed 10 bytes") {
			t.Errorf("a body over the cap (Content-Length %d): %s", length, got)
		}
	}
}

// Any other body fails past the cap, naming the server, and passes no
// byte beyond it.
func TestCutBody(t *testing.T) {
	b := &cutBody{rc: chunked("0123456789ABC"), left: 10, over: overflow{server: "http://agent/mcp", max: 10}}
	out, err := io.ReadAll(b)
	if string(out) != "0123456789" || !errors.Is(err, ErrMessageTooLarge) || !strings.Contains(err.Error(), "a message of http://agent/mcp passed 10 bytes") {
		t.Errorf("got %q, %v", out, err)
	}
	b = &cutBody{rc: chunked("0123456789"), left: 10}
	if out, err := io.ReadAll(b); string(out) != "0123456789" || err != nil {
		t.Errorf("a body of the cap: %q, %v", out, err)
	}
}

// The id and method of a message are read from its beginning, before its
// params, result or error; not after them.
func TestLeadingMembers(t *testing.T) {
	for in, want := range map[string]rpcCall{
		`{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{}}`:    {id: json.RawMessage(`12`), method: "tools/list"},
		`{"jsonrpc":"2.0","id":"a-1","result":{"tools":[`:                {id: json.RawMessage(`"a-1"`)},
		`{"jsonrpc":"2.0","result":{"tools":[]},"id":3}`:                 {},
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{}`: {method: "notifications/progress"},
		`{"id":null,"error":{}}`:                                         {},
		`[{"id":1}]`:                                                     {},
	} {
		got := leadingMembers(bytes.NewReader([]byte(in)))
		if string(got.id) != string(want.id) || got.method != want.method {
			t.Errorf("%s: id %s, method %q; want %s, %q", in, got.id, got.method, want.id, want.method)
		}
	}
}

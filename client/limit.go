package client

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/agentura/agentura/transfer"
)

// The cap on one JSON-RPC message. Nothing bounded what the host side read
// of a server's answer: a server answering tools/list with 200 MiB (800
// tools of 256 KiB descriptions) took `agentura call` to 1.3 GB and a
// running gateway to 1.5 GB (escape E23), the answer read whole, then
// copied and decoded. LimitMessages caps each message on the transports
// the host side opens (the CLI, the gateway, agentura check): a JSON body,
// an SSE event, a line of a stdio server's output. A message over the cap
// is never held whole: the request it answers fails with an error that
// names the server and says what to raise, and the session goes on.

// DefaultMaxMessageBytes is the most one JSON-RPC message from a server may
// hold unless told otherwise (LimitMessages). No honest tools/list or tool
// result comes near it — files travel beside the messages, and an inline
// one is at most 10 MiB (13.3 MiB of base64) — and it bounds what a broken
// or hostile server can make the host hold.
const DefaultMaxMessageBytes = 32 << 20

// maxMessageSetting names what raises the cap, for errors.
const maxMessageSetting = "agentura --max-message, max_message_bytes in a gateway configuration, client.LimitMessages"

// codeMessageTooLarge is the JSON-RPC error code of the answer that stands
// in for one over the cap. It never goes on the wire: the host's own
// go-sdk client reads it.
const codeMessageTooLarge = -32090

// ErrMessageTooLarge is matched (errors.Is) by the error of a request whose
// answer passed the cap of LimitMessages, and by that of a connection that
// ended because a message did.
var ErrMessageTooLarge error = &jsonrpc.Error{Code: codeMessageTooLarge, Message: "a JSON-RPC message passed the cap on one message"}

// LimitMessages returns t with each JSON-RPC message it reads from its
// server capped at max bytes: 0 means DefaultMaxMessageBytes, a negative
// value no cap. Over streamable HTTP (a *mcp.StreamableClientTransport) the
// cap holds for a JSON body and for each SSE event (its lines as sent),
// over stdio (a *mcp.CommandTransport, which is run by a transport of this
// package with the same behaviour) for each line of the server's output.
// A message is passed on once whole, so a message over the cap is never
// held beyond it: the request it answers fails with an error matching
// ErrMessageTooLarge that names the server (its URL or command), and the
// session stays usable; a message that answers no request the host knows
// of ends the connection with such an error. Bodies of other answers
// (errors, other content types) are cut off at the cap the same way.
//
// Over HTTP the cap sits under the HTTP client's transport, below a
// WithTasks client's rewriting (which reads answers whole); other
// transports are returned as they are.
func LimitMessages(t mcp.Transport, max int64) mcp.Transport {
	max = cmp.Or(max, DefaultMaxMessageBytes)
	if max < 0 {
		return t
	}
	switch x := t.(type) {
	case *mcp.StreamableClientTransport:
		out := *x
		out.HTTPClient = withTransport(x.HTTPClient, func(rt http.RoundTripper) http.RoundTripper { return capTransport(rt, max) })
		return &out
	case *mcp.CommandTransport:
		return &commandTransport{cmd: x.Command, terminate: x.TerminateDuration, max: max}
	case readableTransport:
		return readableTransport{LimitMessages(x.t, max)}
	}
	return t
}

// capTransport puts the cap under rt, and under the rewriting of a
// WithTasks client, which reads JSON bodies whole.
func capTransport(rt http.RoundTripper, max int64) http.RoundTripper {
	switch x := rt.(type) {
	case answerTripper:
		return answerTripper{capTransport(x.base, max)}
	case messageCap:
		x.max = max
		return x
	}
	return messageCap{next: rt, max: max}
}

// messageCap is the HTTP side of LimitMessages: it wraps each answer's body
// so that no JSON-RPC message in it passes max.
type messageCap struct {
	next http.RoundTripper
	max  int64
}

func (c messageCap) RoundTrip(req *http.Request) (*http.Response, error) {
	// The request's id and method, read before it goes (the go-sdk puts
	// them before the params): an answer over the cap is replaced by an
	// error answer to that id.
	var call rpcCall
	if req.Method == http.MethodPost && req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			call = leadingMembers(b)
			b.Close()
		}
	}
	if call.id != nil {
		mcptrace.RecordRequestID(req.Context(), call.id) // the span of the request (Trace) has its id
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.Body == http.NoBody {
		return resp, err
	}
	over := overflow{server: transfer.Redact(req.URL.String()), max: c.max, call: call}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	switch {
	case ok && ct == "application/json" && call.id != nil:
		resp.Body = &wholeBody{rc: resp.Body, length: resp.ContentLength, over: over}
		resp.ContentLength = -1 // the stand-in answer has a length of its own
		resp.Header.Del("Content-Length")
	case ok && ct == "text/event-stream":
		resp.Body = &heldUnits{rc: resp.Body, max: c.max, blankEnds: true, over: over.event}
	default:
		resp.Body = &cutBody{rc: resp.Body, left: c.max, over: over}
	}
	return resp, nil
}

// rpcCall is a JSON-RPC call's id (raw JSON; nil: not a call) and method.
type rpcCall struct {
	id     json.RawMessage
	method string
}

// leadingMembers reads the members of a JSON-RPC message that come before
// its params, result or error — "jsonrpc", "id", "method" — without
// reading further: a message over the cap is known by its beginning.
func leadingMembers(r io.Reader) rpcCall {
	var c rpcCall
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return rpcCall{}
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return c
		}
		switch k {
		case "id":
			var id json.RawMessage
			if dec.Decode(&id) != nil || bytes.Equal(id, []byte("null")) {
				return c
			}
			c.id = id
		case "method", "jsonrpc":
			var v string
			if dec.Decode(&v) != nil {
				return c
			}
			if k == "method" {
				c.method = v
			}
		default:
			return c
		}
	}
	return c
}

// overflow is what a message over the cap becomes: its text, and the
// answer that stands in for it when it answers a known call.
type overflow struct {
	server string // the server's URL or command
	max    int64
	call   rpcCall
}

// text says what happened and what to do.
func (o overflow) text() string {
	what := "a message of " + o.server
	if o.call.method != "" {
		what = "the answer of " + o.server + " to " + o.call.method
	}
	return fmt.Sprintf("%s passed %s, the most one message may hold (%s): the server is broken or hostile; raise the cap if you trust it",
		what, sizeText(o.max), maxMessageSetting)
}

// err is the error of a message over the cap that answers no known call:
// the connection ends with it.
func (o overflow) err() error { return &tooLargeError{o.text()} }

// answer is the JSON-RPC error answer to the call, or nil when no call is
// known.
func (o overflow) answer() []byte {
	if o.call.id == nil {
		return nil
	}
	b, _ := json.Marshal(map[string]any{ // nil if it fails
		"jsonrpc": "2.0",
		"id":      o.call.id,
		"error":   map[string]any{"code": codeMessageTooLarge, "message": o.text()},
	})
	return b
}

// event is the SSE event that stands in for an event over the cap, with
// the error that ends the stream after it: the answer to the call and the
// stream's end, or no event and the error.
func (o overflow) event([]byte) ([]byte, error) {
	a := o.answer()
	if a == nil {
		return nil, o.err()
	}
	return append(append([]byte("event: message\ndata: "), a...), "\n\n"...), io.EOF
}

// tooLargeError is the error of a connection that ended at a message over
// the cap.
type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return e.msg }

// Is makes errors.Is(err, ErrMessageTooLarge) hold.
func (e *tooLargeError) Is(target error) bool { return target == ErrMessageTooLarge }

// sizeText writes a cap for people: "32 MiB", "1 KiB", "1000 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// wholeBody is a JSON body of one message: read whole, up to the cap, on
// the first Read, and passed on; over the cap (by its Content-Length, or
// as it comes) it is dropped and the error answer goes on instead. It is
// held in pieces, so that holding it costs its size and no copies.
type wholeBody struct {
	rc     io.ReadCloser
	length int64 // Content-Length, -1 when unknown
	over   overflow
	filled bool
	pieces [][]byte // what is left to give
	err    error    // once pieces are given
}

// wholePiece is the size of the pieces a JSON body is held in.
const wholePiece = 64 << 10

func (b *wholeBody) Read(p []byte) (int, error) {
	if !b.filled {
		b.filled = true
		b.fill()
	}
	for len(b.pieces) > 0 && len(b.pieces[0]) == 0 {
		b.pieces = b.pieces[1:]
	}
	if len(b.pieces) == 0 {
		return 0, b.err
	}
	n := copy(p, b.pieces[0])
	b.pieces[0] = b.pieces[0][n:]
	return n, nil
}

func (b *wholeBody) fill() {
	b.err = io.EOF
	var held int64
	for b.length <= b.over.max && held <= b.over.max {
		piece := make([]byte, min(wholePiece, b.over.max+1-held))
		n, err := io.ReadFull(b.rc, piece)
		if n > 0 {
			b.pieces = append(b.pieces, piece[:n])
			held += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			b.err = err
			return
		}
	}
	if b.length > b.over.max || held > b.over.max {
		b.rc.Close() // nothing more of it is read
		b.pieces = [][]byte{b.over.answer()}
	}
}

func (b *wholeBody) Close() error { return b.rc.Close() }

// cutBody fails once more than the cap has been read: a body that holds
// no message to stand in for (an error status's, a content type the
// go-sdk does not read as messages).
type cutBody struct {
	rc   io.ReadCloser
	left int64
	over overflow
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.over.err()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		b.rc.Close()
		return n - 1, b.over.err() // the byte past the cap is not passed on
	}
	return n, err
}

func (b *cutBody) Close() error { return b.rc.Close() }

// heldUnits passes a stream on in whole units — SSE events (a unit ends at
// a blank line: blankEnds) or lines of newline-delimited JSON (a unit ends
// at each newline) — holding the unit being read. Its reader sees a unit
// only once it is whole (the stream's unfinished last unit at its end), so
// a unit over max bytes (its newlines counted) is never passed on: over is
// given its beginning and returns what goes on in its place and the
// stream's state after it: nil to go on with the next unit (the rest of
// this one is dropped as it comes), io.EOF or another error to end there;
// without over, the unit over max and the rest of the stream pass on as
// they come. each, when set, gives what goes on for a unit (whole: it
// ended; not: the stream ended in it); units over max are not given to it.
// A unit is held in pieces of its own (holding it costs its size, without
// copies as it grows), and a Read gives at most one piece: a decoder
// reading lines reads nothing beyond the line that ends its message.
type heldUnits struct {
	rc        io.ReadCloser
	max       int64
	blankEnds bool
	over      func(begin []byte) ([]byte, error)
	each      func(unit [][]byte, whole bool) [][]byte

	chunk    []byte
	unit     [][]byte // the unit being read
	size     int64    // its bytes
	content  bool     // the line being read has more than its line end
	ready    [][]byte // whole units, and what stands for one over max: what Read gives
	dropping bool     // the rest of a line over max is dropped up to its end
	passing  bool     // a unit was over max, and over is nil: the rest passes as it comes
	err      error    // once ready is given: the end of the stream, or its failure
}

func (h *heldUnits) Read(p []byte) (int, error) {
	for len(h.ready) == 0 && h.err == nil {
		if h.passing {
			return h.rc.Read(p)
		}
		if h.chunk == nil {
			h.chunk = make([]byte, 32<<10)
		}
		n, err := h.rc.Read(h.chunk)
		h.take(h.chunk[:n])
		if err != nil && h.err == nil {
			if !h.dropping && len(h.unit) > 0 {
				h.give(false) // the last unit, unfinished: the go-sdk reads it too
			}
			h.unit, h.size = nil, 0
			h.err = err
		}
	}
	if len(h.ready) == 0 {
		return 0, h.err
	}
	n := copy(p, h.ready[0])
	if h.ready[0] = h.ready[0][n:]; len(h.ready[0]) == 0 {
		h.ready[0] = nil
		h.ready = h.ready[1:]
	}
	return n, nil
}

// take adds b to the unit being read, a line at a time, making whole units
// ready.
func (h *heldUnits) take(b []byte) {
	for len(b) > 0 && h.err == nil {
		if h.passing {
			h.ready = append(h.ready, bytes.Clone(b))
			return
		}
		i := bytes.IndexByte(b, '\n')
		if h.dropping { // up to the newline that ends the line over max
			if i < 0 {
				return
			}
			b = b[i+1:]
			h.dropping = false
			continue
		}
		seg := b
		if i >= 0 {
			seg = b[:i+1]
		}
		b = b[len(seg):]
		h.add(seg)
		h.content = h.content || len(bytes.Trim(seg, "\r\n")) > 0
		if h.size > h.max {
			h.overflow(i < 0)
			continue
		}
		if i < 0 {
			continue
		}
		if !h.blankEnds || !h.content {
			h.give(true)
		}
		h.content = false
	}
}

// give makes the unit being read ready, as each has it.
func (h *heldUnits) give(whole bool) {
	if h.each != nil {
		h.unit = h.each(h.unit, whole)
	}
	h.ready = append(h.ready, h.unit...)
	h.unit, h.size = nil, 0
}

// add copies seg into the unit's pieces, which grow with the unit up to
// wholePiece.
func (h *heldUnits) add(seg []byte) {
	h.size += int64(len(seg))
	for len(seg) > 0 {
		if n := len(h.unit); n > 0 {
			last := h.unit[n-1]
			k := copy(last[len(last):cap(last)], seg)
			h.unit[n-1] = last[:len(last)+k]
			seg = seg[k:]
			if len(seg) == 0 {
				return
			}
		}
		h.unit = append(h.unit, make([]byte, 0, min(max(h.size, 512), wholePiece)))
	}
}

// overflow drops the unit being read, over max: what over gives goes on
// in its place, then the stream ends or the rest of the line is dropped as
// it comes (open: its newline has not come yet). Without over, the unit
// goes on as it came, and so does the rest of the stream.
func (h *heldUnits) overflow(open bool) {
	if h.over == nil {
		h.ready = append(h.ready, h.unit...)
		h.unit, h.size, h.content, h.passing = nil, 0, false, true
		return
	}
	begin := h.unit[0]
	if len(h.unit) > 1 { // the beginning is all over needs
		begin = append(begin[:len(begin):len(begin)], h.unit[1]...)
	}
	stand, err := h.over(begin)
	if len(stand) > 0 {
		h.ready = append(h.ready, stand)
	}
	h.unit, h.size, h.content = nil, 0, false
	if err != nil {
		h.err = err
		h.rc.Close() // nothing more of the stream is read
		return
	}
	h.dropping = open
}

func (h *heldUnits) Close() error { return h.rc.Close() }

// callBook keeps the calls a stdio connection sent and has not had
// answered: an answer over the cap is known by its id.
type callBook struct {
	mu    sync.Mutex
	calls map[jsonrpc.ID]string // id → method
}

func (b *callBook) sent(m jsonrpc.Message) {
	if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
		b.mu.Lock()
		if b.calls == nil {
			b.calls = map[jsonrpc.ID]string{}
		}
		b.calls[r.ID] = r.Method
		b.mu.Unlock()
	}
}

func (b *callBook) answered(m jsonrpc.Message) {
	if r, ok := m.(*jsonrpc.Response); ok {
		b.mu.Lock()
		delete(b.calls, r.ID)
		b.mu.Unlock()
	}
}

// method is the method of the call sent with the id raw, if it awaits its
// answer.
func (b *callBook) method(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil || !id.IsValid() {
		return "", false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.calls[id]
	return m, ok
}

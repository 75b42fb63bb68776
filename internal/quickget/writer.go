package quickget

import (
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// outBufBytes is the size of the buffer a response is gathered in: a
// small file and its headers leave in one write.
const outBufBytes = 68 << 10

// outBufs holds the output buffers of responses in flight.
var outBufs = sync.Pool{New: func() any { b := make([]byte, 0, outBufBytes); return &b }}

// response is the http.ResponseWriter of the quick path. Nothing reaches
// the connection until the handler writes more than the buffer holds, calls
// ReadFrom or Flush, or returns: a small answer is one system call, headers
// and body together, and an answer without a Content-Length gets one when
// it fits the buffer (as net/http does).
type response struct {
	conn   net.Conn
	header http.Header
	head   bool // a HEAD request: the body is not sent
	close  bool // the connection closes after this response

	status    int
	wroteHead bool   // WriteHeader was called: status is final
	sentHead  bool   // the status line and headers are in hdr or gone
	length    int64  // the declared Content-Length, or -1
	lengthStr string // length as the handler wrote it, when it declared one
	written   int64  // body bytes accepted from the handler
	chunked   bool   // no length could be declared: the body goes in chunks
	hdr       []byte // the status line and headers, until they are written
	size      []byte // "\r\n" then a chunk's size line
	vec       [5][]byte
	out       *[]byte
	err       error // a failed write: the connection is done
	keys      []string
}

// reset prepares w for the next request on its connection.
func (w *response) reset(head, closeAfter bool) {
	clear(w.header)
	w.head, w.close = head, closeAfter
	w.status, w.wroteHead, w.sentHead, w.chunked = 0, false, false, false
	w.length, w.written, w.err, w.lengthStr = -1, 0, nil, ""
	w.hdr = w.hdr[:0]
}

// Header implements http.ResponseWriter.
func (w *response) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter. Informational codes are not
// sent: the quick path's handler never sends them.
func (w *response) WriteHeader(code int) {
	if w.wroteHead || code < 200 {
		return
	}
	if code > 999 {
		panic("quickget: invalid WriteHeader code " + strconv.Itoa(code))
	}
	w.wroteHead = true
	w.status = code
	if v := w.header.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			w.length, w.lengthStr = n, v
		} else {
			w.header.Del("Content-Length")
		}
	}
}

// statusHasBody reports whether the status may carry a body.
func (w *response) statusHasBody() bool {
	return w.status != http.StatusNoContent && w.status != http.StatusNotModified
}

// Write implements http.ResponseWriter.
func (w *response) Write(p []byte) (int, error) {
	if !w.wroteHead {
		w.WriteHeader(http.StatusOK)
	}
	switch {
	case w.err != nil:
		return 0, w.err
	case !w.statusHasBody():
		return 0, http.ErrBodyNotAllowed
	case w.length >= 0 && w.written+int64(len(p)) > w.length:
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if w.head {
		w.sniff(nil, p)    // the type as a GET would have it
		return len(p), nil // counted, not sent
	}
	out := w.buf()
	if len(*out)+len(p) <= outBufBytes {
		*out = append(*out, p...)
		return len(p), nil
	}
	if !w.sentHead {
		w.chunked = w.length < 0
		w.sniff(*out, p)
		w.appendHead()
	}
	if len(p) <= outBufBytes/2 {
		if err := w.flush(nil); err != nil {
			return 0, err
		}
		*out = append(*out, p...)
		return len(p), nil
	}
	if err := w.flush(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ReadFrom sends src's bytes after the headers; from a file on a TCP
// connection that is sendfile, as with net/http.
func (w *response) ReadFrom(src io.Reader) (int64, error) {
	if !w.wroteHead {
		w.WriteHeader(http.StatusOK)
	}
	rf, ok := w.conn.(io.ReaderFrom)
	if !ok || w.length < 0 || w.head || !w.statusHasBody() || w.err != nil {
		return io.Copy(writerOnly{w}, src)
	}
	if !w.sentHead {
		w.appendHead()
	}
	if err := w.flush(nil); err != nil {
		return 0, err
	}
	if lr, ok := src.(*io.LimitedReader); !ok || lr.N > w.length-w.written {
		src = &io.LimitedReader{R: src, N: w.length - w.written}
	}
	// Corked, a file sent in chunks leaves in full segments: uncorked (and
	// with TCP_NODELAY, Go's default) each wake-up after a full socket
	// buffer pushes a short one. About a tenth of a 256 MiB download's
	// speed on loopback (docs/benchmarks.md).
	if sc, ok := w.conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil && SetCork(rc, true) == nil {
			defer SetCork(rc, false)
		}
	}
	n, err := rf.ReadFrom(src)
	w.written += n
	if err != nil {
		w.err = err
	}
	return n, err
}

// writerOnly hides ReadFrom from io.Copy.
type writerOnly struct{ io.Writer }

// Flush implements http.Flusher: what is buffered leaves now.
func (w *response) Flush() {
	if !w.wroteHead {
		w.WriteHeader(http.StatusOK)
	}
	if !w.sentHead {
		w.chunked = w.length < 0 && !w.head && w.statusHasBody()
		w.sniff(*w.buf(), nil)
		w.appendHead()
	}
	w.flush(nil)
}

// finish completes the response once the handler returned, and reports
// whether the connection can carry another request.
func (w *response) finish() bool {
	if !w.wroteHead {
		w.WriteHeader(http.StatusOK)
	}
	if !w.sentHead {
		// The handler is done: a body without a declared length is all here.
		if w.length < 0 && w.statusHasBody() && (!w.head || w.written > 0) {
			w.length = w.written
			w.lengthStr = strconv.FormatInt(w.written, 10)
		}
		w.sniff(*w.buf(), nil)
		w.appendHead()
	}
	w.flush(nil)
	if w.chunked && w.err == nil {
		if _, err := io.WriteString(w.conn, "0\r\n\r\n"); err != nil {
			w.err = err
		}
	}
	if w.out != nil {
		outBufs.Put(w.out)
		w.out = nil
	}
	short := !w.head && w.statusHasBody() && !w.chunked && w.length >= 0 && w.written < w.length
	return w.err == nil && !w.close && !short
}

// buf returns the body buffer, taking one from the pool if needed.
func (w *response) buf() *[]byte {
	if w.out == nil {
		w.out = outBufs.Get().(*[]byte)
		*w.out = (*w.out)[:0]
	}
	return w.out
}

// flush writes the headers not yet written, the body buffer and then
// more (when not nil), in one system call; a chunked body is framed.
func (w *response) flush(more []byte) error {
	if w.err != nil {
		return w.err
	}
	var body []byte
	if w.out != nil {
		body = *w.out
		*w.out = body[:0]
	}
	bufs := net.Buffers(w.vec[:0])
	if len(w.hdr) > 0 {
		bufs = append(bufs, w.hdr)
	}
	if n := len(body) + len(more); n > 0 {
		if w.chunked {
			w.size = strconv.AppendInt(append(w.size[:0], "\r\n"...), int64(n), 16)
			w.size = append(w.size, "\r\n"...)
			bufs = append(bufs, w.size[2:])
		}
		bufs = append(bufs, body, more)
		if w.chunked {
			bufs = append(bufs, w.size[:2])
		}
	}
	var err error
	switch len(bufs) {
	case 0:
	case 1:
		_, err = w.conn.Write(bufs[0])
	default:
		_, err = bufs.WriteTo(w.conn)
	}
	w.hdr = w.hdr[:0]
	if err != nil {
		w.err = err
	}
	return err
}

// appendHead puts the status line and headers in hdr.
func (w *response) appendHead() {
	w.sentHead = true
	b := append(w.hdr[:0], "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(w.status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(w.status)...)
	b = append(b, "\r\n"...)
	h := w.header
	// The framing is the writer's, whatever the handler put in the map
	// after WriteHeader (net/http writes a copy taken then): a length that
	// differs from the body, or a length beside chunks, desyncs the client.
	delete(h, "Transfer-Encoding")
	switch {
	case !w.statusHasBody():
		delete(h, "Content-Length")
	case w.chunked:
		delete(h, "Content-Length")
		h["Transfer-Encoding"] = headerChunked
	case w.length < 0:
		delete(h, "Content-Length")
	case len(h["Content-Length"]) != 1 || h["Content-Length"][0] != w.lengthStr:
		h["Content-Length"] = []string{w.lengthStr}
	}
	if w.close {
		h["Connection"] = headerClose
	} else if v, ok := h["Connection"]; ok && httpguts.HeaderValuesContainsToken(v, "close") {
		w.close = true // the handler's wish, as net/http honours it
	}
	if _, ok := h["Date"]; !ok {
		h["Date"] = now()
	}
	w.keys = w.keys[:0]
	for k := range h {
		w.keys = append(w.keys, k)
	}
	slices.Sort(w.keys)
	for _, k := range w.keys {
		if !httpguts.ValidHeaderFieldName(k) {
			continue // as net/http: a name cannot end the header early either
		}
		for _, v := range h[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			b = appendClean(b, v)
			b = append(b, "\r\n"...)
		}
	}
	w.hdr = append(b, "\r\n"...)
}

// appendClean appends a header value with CR and LF replaced by spaces,
// as net/http does: a value cannot end the header early.
func appendClean(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}

// sniff sets the Content-Type from the first body bytes (buffered, else
// more) when the handler set none, as net/http does when it writes the
// headers.
func (w *response) sniff(buffered, more []byte) {
	if _, ok := w.header["Content-Type"]; ok || !w.statusHasBody() {
		return
	}
	if _, ok := w.header["Transfer-Encoding"]; ok {
		return
	}
	p := buffered
	if len(p) == 0 {
		p = more
	}
	if len(p) > 0 {
		w.header["Content-Type"] = []string{http.DetectContentType(p)}
	}
}

var (
	headerClose   = []string{"close"}
	headerChunked = []string{"chunked"}
)

// dateCache is the Date header of the current second.
var dateCache atomic.Pointer[dateValue]

type dateValue struct {
	sec   int64
	value []string // shared: readers never change it
}

// now returns the Date header's value, formatted once a second.
func now() []string {
	t := time.Now()
	if d := dateCache.Load(); d != nil && d.sec == t.Unix() {
		return d.value
	}
	d := &dateValue{sec: t.Unix(), value: []string{t.UTC().Format(http.TimeFormat)}}
	dateCache.Store(d)
	return d.value
}

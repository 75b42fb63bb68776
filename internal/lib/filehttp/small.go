package filehttp

import (
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/agentura/agentura/fileserve"
)

// smallFileBytes is the largest file served from memory rather than by
// sendfile: for a small file, one read and one write of headers and body
// together cost less than writing the headers, then sendfile.
const smallFileBytes = 64 << 10

// smallBufs holds the buffers of small files in flight.
var smallBufs = sync.Pool{New: func() any { b := make([]byte, smallFileBytes); return &b }}

// plainGet reports whether r is a GET that http.ServeContent would answer
// with the whole file: no range, no precondition.
func plainGet(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	h := r.Header
	for _, k := range [...]string{"Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range"} {
		if _, ok := h[k]; ok {
			return false
		}
	}
	return true
}

// serveSmall answers a plain GET of a small file on local disk as
// http.ServeContent would (same headers, status 200), from one read. It
// reports false, having written nothing, when it cannot.
func serveSmall(w http.ResponseWriter, obj fileserve.Object, m fileserve.Meta) bool {
	f, ok := obj.(*os.File)
	if !ok || m.Size > smallFileBytes {
		return false
	}
	bp := smallBufs.Get().(*[]byte)
	defer smallBufs.Put(bp)
	buf := (*bp)[:m.Size]
	if _, err := io.ReadFull(f, buf); err != nil {
		f.Seek(0, io.SeekStart)
		return false
	}
	writeSmall(w, m, buf)
	return true
}

// writeSmall answers 200 with content, the whole of m, as
// http.ServeContent would for a plain GET.
func writeSmall(w http.ResponseWriter, m fileserve.Meta, content []byte) {
	h := w.Header()
	if !m.Created.IsZero() {
		h["Last-Modified"] = []string{m.Created.UTC().Format(http.TimeFormat)}
	}
	h["Accept-Ranges"] = headerBytes
	h["Content-Length"] = []string{strconv.Itoa(len(content))}
	w.WriteHeader(http.StatusOK)
	w.Write(content)
}

var headerBytes = []string{"bytes"}

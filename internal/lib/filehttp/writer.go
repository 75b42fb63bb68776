package filehttp

import (
	"cmp"
	"io"
	"net/http"
	"time"
)

// countingWriter records the status and counts the body bytes of a
// response, and keeps the zero-copy path (sendfile) open under frameworks
// whose ResponseWriter lacks io.ReaderFrom, such as gin's: its ReadFrom
// reaches through the Unwrap chain, as http.ResponseController does, to the
// first writer that implements io.ReaderFrom.
type countingWriter struct {
	http.ResponseWriter
	code int   // first final status written; 0 until then
	n    int64 // body bytes written

	// rc moves the connection's write deadline to timeout from now before
	// each write (conn.go); nil: no write deadline.
	rc      *http.ResponseController
	timeout time.Duration

	resolved bool
	rf       io.ReaderFrom // nil: no ReaderFrom in the chain
}

// maxUnwrap bounds the walk down the Unwrap chain.
const maxUnwrap = 16

func (c *countingWriter) status() int {
	return cmp.Or(c.code, http.StatusOK)
}

// WriteHeader records the first final status and passes it on.
func (c *countingWriter) WriteHeader(code int) {
	if c.code == 0 && code >= 200 {
		c.code = code
	}
	c.ResponseWriter.WriteHeader(code)
}

// Write counts and passes on.
func (c *countingWriter) Write(p []byte) (int, error) {
	c.code = cmp.Or(c.code, http.StatusOK)
	c.extend()
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadFrom copies src into the response, with sendfile when the innermost
// writer is the server's own and src is a file.
func (c *countingWriter) ReadFrom(src io.Reader) (int64, error) {
	c.code = cmp.Or(c.code, http.StatusOK)
	if rf := c.readerFrom(); rf != nil {
		var n int64
		var err error
		if c.rc != nil {
			n, err = c.readFromInSteps(rf, src)
		} else {
			n, err = rf.ReadFrom(src)
		}
		c.n += n
		return n, err
	}
	return io.CopyBuffer(writerOnly{c}, src, make([]byte, 32<<10))
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// readerFrom finds the first io.ReaderFrom down the Unwrap chain. Reaching
// past a wrapper, it first makes the wrapper send the status and headers it
// may be holding back (gin's does until the first Write), so that writing
// underneath it does not go out with a default 200.
func (c *countingWriter) readerFrom() io.ReaderFrom {
	if c.resolved {
		return c.rf
	}
	c.resolved = true
	cur := c.ResponseWriter
	for depth := 0; depth < maxUnwrap; depth++ {
		if rf, ok := cur.(io.ReaderFrom); ok {
			if depth > 0 {
				if _, err := c.ResponseWriter.Write(nil); err != nil {
					return nil
				}
			}
			c.rf = rf
			return rf
		}
		u, ok := cur.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		cur = u.Unwrap()
	}
	return nil
}

// writerOnly hides the ReadFrom of a writer so io.Copy does not recurse.
type writerOnly struct{ io.Writer }

// innermost returns the last writer of w's Unwrap chain.
func innermost(w http.ResponseWriter) http.ResponseWriter {
	for depth := 0; depth < maxUnwrap; depth++ {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	return w
}

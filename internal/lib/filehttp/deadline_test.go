package filehttp

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/storetest"
)

// dialSmall opens a connection to the server of u whose receive buffer is
// small, so that a client that stops reading holds the server's writes at
// once.
func dialSmall(t *testing.T, u string) net.Conn {
	t.Helper()
	pu, _ := url.Parse(u)
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10) })
	}}
	c, err := d.Dial("tcp", pu.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	pu.Scheme, pu.Host = "", ""
	if _, err := io.WriteString(c, "GET "+pu.RequestURI()+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// A download's write deadline moves with it: a client that stops reading
// is dropped about WriteTimeout later, a slow but steady one gets the whole
// file, and the deadline is lifted after a download, so the connection's
// next request (here after more than WriteTimeout) is answered.
func TestDownloadWriteDeadline(t *testing.T) {
	const timeout = 2 * time.Second // generous: a loaded machine can pause a steady reader
	for _, mount := range mounts {
		t.Run(mount, func(t *testing.T) {
			env := newTestEnv(t, mount, func(c *Config) { c.WriteTimeout = timeout })
			big := storetest.Pattern(32 << 20)
			bigURL := env.signedURL(t, env.put(t, fileserve.Outputs, "o", "big.bin", big))

			// A client that stops reading.
			c := dialSmall(t, bigURL)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(resp.Body, make([]byte, 64<<10)); err != nil {
				t.Fatal(err)
			}
			stopped := time.Now()
			time.Sleep(3 * timeout)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, err := io.Copy(io.Discard, resp.Body)
			t.Logf("stalled reader: stopped at 64 KiB, %d more bytes buffered, then %v (%v after it stopped)", n, err, time.Since(stopped).Round(time.Millisecond))
			if err == nil || n+64<<10 >= int64(len(big)) {
				t.Errorf("a reader that stopped for %v got the whole file (%d bytes, %v): it was not dropped", 3*timeout, n+64<<10, err)
			}

			// A slow but steady client: 64 KiB every 25 ms (2.6 MB/s, a
			// 512 KiB step in 0.2 s), well below what the server can send.
			steady := storetest.Pattern(6 << 20)
			c = dialSmall(t, env.signedURL(t, env.put(t, fileserve.Outputs, "o", "steady.bin", steady)))
			c.SetReadDeadline(time.Now().Add(time.Minute))
			resp, err = http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			start := time.Now()
			for {
				_, err := io.CopyN(&got, resp.Body, 64<<10)
				if err != nil {
					break
				}
				time.Sleep(25 * time.Millisecond)
			}
			t.Logf("steady reader: %d of %d bytes in %v", got.Len(), len(steady), time.Since(start).Round(time.Millisecond))
			if !bytes.Equal(got.Bytes(), steady) {
				t.Errorf("a slow but steady reader got %d of %d bytes: it was dropped", got.Len(), len(steady))
			}

			// The connection's next request, after more than the timeout.
			small := env.signedURL(t, env.put(t, fileserve.Outputs, "o", "s.txt", []byte("small")))
			client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: 30 * time.Second}
			defer client.CloseIdleConnections()
			for i := range 2 {
				if i == 1 {
					time.Sleep(timeout + timeout/2)
				}
				resp, err := client.Get(small)
				if err != nil {
					t.Fatalf("request %d on one connection: %v", i+1, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || string(b) != "small" {
					t.Fatalf("request %d on one connection: %d %q", i+1, resp.StatusCode, b)
				}
			}
		})
	}
}

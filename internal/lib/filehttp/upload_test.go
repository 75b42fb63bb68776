package filehttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/storetest"
	"github.com/agentura/agentura/transfer"
	"github.com/prometheus/client_golang/prometheus"
)

// multipartBody streams fields (name → content) and a file part as a
// multipart body, without knowing its length up front.
func multipartBody(fileField, fileName string, content []byte, extra map[string]string) (io.Reader, string) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		for k, v := range extra {
			mw.WriteField(k, v)
		}
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf(`form-data; name=%q`, fileField)
		if fileName != "" {
			disp += fmt.Sprintf(`; filename=%q`, fileName)
		}
		h.Set("Content-Disposition", disp)
		h.Set("Content-Type", "application/octet-stream")
		part, err := mw.CreatePart(h)
		if err == nil {
			_, err = part.Write(content)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr, mw.FormDataContentType()
}

func decodeUpload(t *testing.T, resp *http.Response, body []byte) transfer.Upload {
	t.Helper()
	if resp.StatusCode != 201 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("upload: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var up transfer.Upload
	if err := json.Unmarshal(body, &up); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	json.Unmarshal(body, &raw)
	for _, k := range []string{"url", "name", "size_bytes", "mime_type"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("upload answer lacks %q: %s", k, body)
		}
	}
	return up
}

func TestUpload(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), storetest.Pattern(200_000)...)
	for _, mount := range mounts {
		t.Run(mount, func(t *testing.T) {
			env := newTestEnv(t, mount, nil)
			for _, tc := range []struct {
				name     string
				send     func() (io.Reader, http.Header)
				wantName string
			}{
				{"multipart", func() (io.Reader, http.Header) {
					body, ct := multipartBody("file", "scan.png", png, map[string]string{"note": "before the file"})
					return body, http.Header{"Content-Type": {ct}}
				}, "scan.png"},
				{"multipart with folder", func() (io.Reader, http.Header) {
					body, ct := multipartBody("file", "../scans/scan.png", png, nil)
					return body, http.Header{"Content-Type": {ct}}
				}, "scans/scan.png"},
				{"multipart without filename, X-Filename", func() (io.Reader, http.Header) {
					body, ct := multipartBody("file", "", png, nil)
					return body, http.Header{"Content-Type": {ct}, "X-Filename": {"named.png"}}
				}, "named.png"},
				{"raw", func() (io.Reader, http.Header) {
					return bytes.NewReader(png), http.Header{"X-Filename": {"raw.png"}, "Content-Type": {"application/octet-stream"}}
				}, "raw.png"},
				{"raw chunked, encoded name", func() (io.Reader, http.Header) {
					return io.MultiReader(bytes.NewReader(png)), http.Header{"X-Filename": {"UTF-8''Bild_%C3%BC.png"}}
				}, "Bild_ü.png"},
			} {
				body, header := tc.send()
				resp, respBody := do(t, "POST", env.ts.URL+"/uploads", header, body)
				up := decodeUpload(t, resp, respBody)
				if up.Name != tc.wantName || up.SizeBytes != int64(len(png)) || up.MIMEType != "image/png" {
					t.Errorf("%s: answer %+v", tc.name, up)
				}
				if !strings.HasPrefix(up.URL, env.ts.URL+"/files/") {
					t.Errorf("%s: url %s", tc.name, up.URL)
				}
				resp, got := do(t, "GET", up.URL, nil, nil)
				if resp.StatusCode != 200 || !bytes.Equal(got, png) || resp.Header.Get("Content-Type") != "image/png" {
					t.Errorf("%s: GET of the staged file: %d, %d bytes", tc.name, resp.StatusCode, len(got))
				}
				resp, got = do(t, "HEAD", up.URL, nil, nil)
				if resp.StatusCode != 200 || len(got) != 0 || resp.ContentLength != int64(len(png)) {
					t.Errorf("%s: HEAD of the staged file: %d", tc.name, resp.StatusCode)
				}
			}
			n := 0
			env.st.Walk(bg, fileserve.Staging, func(m fileserve.Meta) error {
				n++
				if m.Owner != AnonymousOwner {
					t.Errorf("staged file owned by %q", m.Owner)
				}
				return nil
			})
			if n != 5 {
				t.Errorf("%d files staged, want 5", n)
			}
		})
	}
}

func TestUploadLimit(t *testing.T) {
	const limit = 100_000
	for _, mount := range mounts {
		t.Run(mount, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			env := newTestEnv(t, mount, func(c *Config) { c.MaxUploadBytes = limit; c.Metrics = reg })
			over := storetest.Pattern(limit + 1)
			for _, tc := range []struct {
				name string
				send func() (io.Reader, http.Header)
			}{
				{"raw with length", func() (io.Reader, http.Header) {
					return bytes.NewReader(over), http.Header{"X-Filename": {"big.bin"}}
				}},
				{"raw far over with length", func() (io.Reader, http.Header) {
					return bytes.NewReader(storetest.Pattern(4 * limit)), http.Header{"X-Filename": {"big.bin"}}
				}},
				{"raw chunked", func() (io.Reader, http.Header) {
					return io.MultiReader(bytes.NewReader(over)), http.Header{"X-Filename": {"big.bin"}}
				}},
				{"multipart", func() (io.Reader, http.Header) {
					body, ct := multipartBody("file", "big.bin", over, nil)
					return body, http.Header{"Content-Type": {ct}}
				}},
				{"multipart far over", func() (io.Reader, http.Header) {
					body, ct := multipartBody("file", "big.bin", storetest.Pattern(10*limit), nil)
					return body, http.Header{"Content-Type": {ct}}
				}},
				{"multipart, huge field before the file", func() (io.Reader, http.Header) {
					body, ct := multipartBody("file", "small.bin", []byte("x"), map[string]string{"junk": string(storetest.Pattern(2 * limit))})
					return body, http.Header{"Content-Type": {ct}}
				}},
			} {
				body, header := tc.send()
				resp, respBody := do(t, "POST", env.ts.URL+"/uploads", header, body)
				if resp.StatusCode != 413 {
					t.Errorf("%s: status %d, want 413: %s", tc.name, resp.StatusCode, respBody)
					continue
				}
				if got, want := jsonError(t, resp, respBody), "upload exceeds the limit of 100000 bytes (AGENT_MAX_UPLOAD_BYTES)"; got != want {
					t.Errorf("%s: %q, want %q", tc.name, got, want)
				}
			}
			assertEmpty(t, env.st)

			// Exactly the limit is fine.
			resp, body := do(t, "POST", env.ts.URL+"/uploads", http.Header{"X-Filename": {"ok.bin"}}, bytes.NewReader(over[:limit]))
			decodeUpload(t, resp, body)
			if got := gather(t, reg); got[`agentura_uploads_total{status="413"}`] != 6 || got[`agentura_uploads_total{status="201"}`] != 1 {
				t.Errorf("upload metrics: %v", got)
			}
		})
	}
}

func TestUploadErrors(t *testing.T) {
	for _, mount := range mounts {
		t.Run(mount, func(t *testing.T) {
			env := newTestEnv(t, mount, nil)
			noFile, ct := multipartBody("document", "x.pdf", []byte("x"), nil)
			noName, ct2 := multipartBody("file", "", []byte("x"), nil)
			for _, tc := range []struct {
				name, method string
				header       http.Header
				body         io.Reader
				status       int
				reason       string
			}{
				{"no name", "POST", nil, strings.NewReader("content"), 400, "X-Filename"},
				{"blank name", "POST", http.Header{"X-Filename": {"  "}}, strings.NewReader("content"), 400, "field `file`"},
				{"no file field", "POST", http.Header{"Content-Type": {ct}}, noFile, 400, "field `file`"},
				{"file part without name", "POST", http.Header{"Content-Type": {ct2}}, noName, 400, "X-Filename"},
				{"broken multipart", "POST", http.Header{"Content-Type": {"multipart/form-data; boundary=xyz"}}, strings.NewReader("garbage"), 400, "multipart"},
				{"multipart without boundary", "POST", http.Header{"Content-Type": {"multipart/form-data"}}, strings.NewReader("garbage"), 400, "multipart"},
				{"GET", "GET", nil, nil, 405, "use POST"},
				{"PUT", "PUT", http.Header{"X-Filename": {"x"}}, strings.NewReader("x"), 405, "use POST"},
			} {
				resp, body := do(t, tc.method, env.ts.URL+"/uploads", tc.header, tc.body)
				if resp.StatusCode != tc.status {
					t.Errorf("%s: status %d, want %d: %s", tc.name, resp.StatusCode, tc.status, body)
					continue
				}
				if reason := jsonError(t, resp, body); !strings.Contains(reason, tc.reason) {
					t.Errorf("%s: %q does not mention %q", tc.name, reason, tc.reason)
				}
			}
			assertEmpty(t, env.st)
		})
	}
}

func TestUploadOwner(t *testing.T) {
	env := newTestEnv(t, "gin", func(c *Config) {
		c.Owner = func(r *http.Request) (string, error) {
			if u := r.Header.Get("X-Test-User"); u != "" {
				return u, nil
			}
			return "", errors.New("send Authorization: Bearer <token>")
		}
	})
	resp, body := do(t, "POST", env.ts.URL+"/uploads", http.Header{"X-Filename": {"x.txt"}}, strings.NewReader("x"))
	if resp.StatusCode != 401 || !strings.Contains(jsonError(t, resp, body), "Bearer") {
		t.Errorf("unauthenticated: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, "POST", env.ts.URL+"/uploads", http.Header{"X-Filename": {"x.txt"}, "X-Test-User": {"carol"}}, strings.NewReader("carol's"))
	up := decodeUpload(t, resp, body)
	obj, m, own, err := env.srv.OpenURL(bg, up.URL, "carol")
	if err != nil || !own {
		t.Fatalf("OpenURL: own=%v, %v", own, err)
	}
	defer obj.Close()
	if m.Owner != "carol" || m.Area != fileserve.Staging {
		t.Errorf("staged as %+v", m)
	}
}

package agentcore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/transfer"
)

// Markers of what a store's error names and a caller must never read: the
// data folder, the address of the store's server, its bucket.
const (
	secretDir    = "/srv/secret-data"
	secretAddr   = "10.9.8.7:9000"
	secretBucket = "secret-bucket"
)

// failingStore is a DiskStore that, once broken, fails every operation
// with an error naming where the files lie, as a real store's errors do:
// a full disk (ENOSPC) or a store server that refuses connections.
type failingStore struct {
	*fileserve.DiskStore
	broken atomic.Value // nil, or the errno every operation fails with
}

func (s *failingStore) fail(op, name string) error {
	errno, _ := s.broken.Load().(syscall.Errno)
	if errno == 0 {
		return nil
	}
	if errno == syscall.ECONNREFUSED {
		return fmt.Errorf("s3: %s %s/%s: %w", op, secretBucket, name,
			&net.OpError{Op: "dial", Net: "tcp", Addr: fakeAddr(secretAddr), Err: os.NewSyscallError("connect", errno)})
	}
	return fmt.Errorf("fileserve: %s: %w", op, &os.PathError{Op: "open", Path: secretDir + "/records/" + name, Err: errno})
}

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }

func (s *failingStore) Put(ctx context.Context, f fileserve.NewFile, r io.Reader) (fileserve.Meta, error) {
	if err := s.fail("put", f.Name); err != nil {
		return fileserve.Meta{}, err
	}
	return s.DiskStore.Put(ctx, f, r)
}

func (s *failingStore) Adopt(ctx context.Context, f fileserve.NewFile, path string) (fileserve.Meta, error) {
	if err := s.fail("adopt", path); err != nil {
		return fileserve.Meta{}, err
	}
	return s.DiskStore.Adopt(ctx, f, path)
}

func (s *failingStore) Stat(ctx context.Context, area fileserve.Area, owner, id string) (fileserve.Meta, error) {
	if err := s.fail("stat", id); err != nil {
		return fileserve.Meta{}, err
	}
	return s.DiskStore.Stat(ctx, area, owner, id)
}

func (s *failingStore) Open(ctx context.Context, area fileserve.Area, owner, id string) (fileserve.Object, fileserve.Meta, error) {
	if err := s.fail("open", id); err != nil {
		return nil, fileserve.Meta{}, err
	}
	return s.DiskStore.Open(ctx, area, owner, id)
}

func (s *failingStore) ReadSmall(ctx context.Context, area fileserve.Area, owner, id string, buf []byte) (fileserve.Meta, []byte, bool, error) {
	if err := s.fail("read", id); err != nil {
		return fileserve.Meta{}, nil, false, err
	}
	return s.DiskStore.ReadSmall(ctx, area, owner, id, buf)
}

func (s *failingStore) Delete(ctx context.Context, area fileserve.Area, owner, id string) error {
	if err := s.fail("delete", id); err != nil {
		return err
	}
	return s.DiskStore.Delete(ctx, area, owner, id)
}

func (s *failingStore) Walk(ctx context.Context, area fileserve.Area, fn func(fileserve.Meta) error) error {
	if err := s.fail("walk", string(area)); err != nil {
		return err
	}
	return s.DiskStore.Walk(ctx, area, fn)
}

func (s *failingStore) PutRecord(ctx context.Context, kind, owner, name string, data []byte) error {
	if err := s.fail("put record", kind+"/"+owner+"/"+name); err != nil {
		return err
	}
	return s.DiskStore.PutRecord(ctx, kind, owner, name, data)
}

func (s *failingStore) CreateRecord(ctx context.Context, kind, owner, name string, data []byte) error {
	if err := s.fail("create record", kind+"/"+owner+"/"+name); err != nil {
		return err
	}
	return s.DiskStore.CreateRecord(ctx, kind, owner, name, data)
}

func (s *failingStore) GetRecord(ctx context.Context, kind, owner, name string) ([]byte, error) {
	if err := s.fail("read record", kind+"/"+owner+"/"+name); err != nil {
		return nil, err
	}
	return s.DiskStore.GetRecord(ctx, kind, owner, name)
}

func (s *failingStore) DeleteRecord(ctx context.Context, kind, owner, name string) error {
	if err := s.fail("delete record", kind+"/"+owner+"/"+name); err != nil {
		return err
	}
	return s.DiskStore.DeleteRecord(ctx, kind, owner, name)
}

func (s *failingStore) Records(ctx context.Context, kind, owner string) ([]fileserve.RecordInfo, error) {
	if err := s.fail("list records", kind+"/"+owner); err != nil {
		return nil, err
	}
	return s.DiskStore.Records(ctx, kind, owner)
}

// When its store fails (E21), the agent answers every caller with the
// cause in words and a reason code (storage_full, storage_unavailable),
// never with the store's error itself, which names the data folder, the
// store's address or its bucket; the details go to the log. An empty or
// malformed task id is refused as a bad parameter before it names a record.
func TestStoreFailuresNameNothingOfTheServer(t *testing.T) {
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &failingStore{DiskStore: disk}
	svc, srv := serveTestService(t, func(c *Config) { c.Store = st })
	addEchoTool(svc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*mcptest.CallTimeout)
	defer cancel()

	// Made while the store works: a file to download, delete and revoke.
	c := tasksClient(srv.URL)
	made := send(t, c, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"source": "data:text/plain;name=a.txt,kept"}})
	var produced struct {
		StructuredContent transfer.File `json:"structuredContent"`
	}
	if made.Response.Error != nil || json.Unmarshal(made.Response.Result, &produced) != nil {
		t.Fatalf("echo: %+v %s", made.Response.Error, made.Response.Result)
	}
	out := produced.StructuredContent
	if out.File == nil {
		t.Fatal("the output has no file URI")
	}
	// And an upload descriptor whose bytes come once the store failed.
	var descriptor struct {
		Upload struct {
			URL string `json:"url"`
		} `json:"upload"`
	}
	ans := send(t, c, "files/authorizeUpload", map[string]any{"name": "later.txt", "mimeType": "text/plain", "size": 5})
	if ans.Response.Error != nil || json.Unmarshal(ans.Response.Result, &descriptor) != nil || descriptor.Upload.URL == "" {
		t.Fatalf("files/authorizeUpload: %+v %s", ans.Response.Error, ans.Response.Result)
	}
	// No task id at all, or an empty or malformed one: -32602, nothing read.
	for _, id := range []any{nil, "", "../../x", strings.Repeat("a", 26)} {
		params := map[string]any{"taskId": id}
		for _, method := range []string{"tasks/get", "tasks/cancel"} {
			ans := send(t, c, method, params)
			if e := ans.Response.Error; e == nil || e.Code != -32602 {
				t.Errorf("%s with taskId %#v: %+v, want -32602", method, id, ans.Response)
			} else if strings.Contains(e.Message, "records") || strings.Contains(e.Message, "..") {
				t.Errorf("%s with taskId %#v names the store: %s", method, id, e.Message)
			}
		}
	}

	for _, tc := range []struct {
		errno  syscall.Errno
		reason string
		status int
	}{
		{syscall.ENOSPC, fault.StorageFull, http.StatusInsufficientStorage},
		{syscall.ECONNREFUSED, fault.StorageUnavailable, http.StatusServiceUnavailable},
	} {
		st.broken.Store(tc.errno)
		leaks := func(what, body string) {
			t.Helper()
			for _, m := range []string{secretDir, secretAddr, secretBucket, "records/"} {
				if strings.Contains(body, m) {
					t.Errorf("%v: %s names %q: %s", tc.errno, what, m, body)
				}
			}
			if !strings.Contains(body, tc.reason) {
				t.Errorf("%v: %s does not give the reason %s: %s", tc.errno, what, tc.reason, body)
			}
		}
		rpc := func(method string, params map[string]any) {
			t.Helper()
			ans := send(t, c, method, params)
			e := ans.Response.Error
			if e == nil || e.Code != -32603 {
				t.Errorf("%v: %s = %+v, want -32603", tc.errno, method, ans.Response)
				return
			}
			leaks(method, e.Message+" "+string(e.Data))
		}
		id := "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		rpc("tasks/get", map[string]any{"taskId": id})
		rpc("tasks/cancel", map[string]any{"taskId": id})
		rpc("resources/list", nil)
		rpc("files/authorizeDownload", map[string]any{"uri": out.File.URI})

		// A tool's output that cannot be stored: a tool error saying so.
		ans := send(t, c, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"source": "data:text/plain;name=b.txt,new"}})
		if ans.Response.Error != nil {
			leaks("tools/call", ans.Response.Error.Message+" "+string(ans.Response.Error.Data))
		} else {
			var res struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			json.Unmarshal(ans.Response.Result, &res)
			if !res.IsError || len(res.Content) == 0 {
				t.Errorf("%v: tools/call = %s, want a tool error", tc.errno, ans.Response.Result)
			} else {
				_, words := fault.Classify(fmt.Errorf("x: %w", tc.errno))
				if !strings.Contains(res.Content[0].Text, words) {
					t.Errorf("%v: the tool error does not say %q: %s", tc.errno, words, res.Content[0].Text)
				}
				for _, m := range []string{secretDir, secretAddr, secretBucket} {
					if strings.Contains(res.Content[0].Text, m) {
						t.Errorf("%v: the tool error names %q: %s", tc.errno, m, res.Content[0].Text)
					}
				}
			}
		}

		// HTTP: the status says full (507) or unavailable (503, with
		// Retry-After), the JSON body the reason.
		do := func(method, url, body string, headers ...string) {
			t.Helper()
			req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
			for i := 0; i+1 < len(headers); i += 2 {
				req.Header.Set(headers[i], headers[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			what := method + " " + strings.TrimPrefix(url, srv.URL)
			if len(what) > 60 {
				what = what[:60]
			}
			if resp.StatusCode != tc.status {
				t.Errorf("%v: %s = %d %s, want %d", tc.errno, what, resp.StatusCode, b, tc.status)
			}
			if tc.status == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
				t.Errorf("%v: %s = 503 without Retry-After", tc.errno, what)
			}
			leaks(what, string(b))
		}
		do(http.MethodPost, srv.URL+transfer.UploadsPath, "bytes", "X-Filename", "up.txt", "Content-Type", "text/plain")
		do(http.MethodPut, descriptor.Upload.URL, "later")
		do(http.MethodGet, out.DownloadURL, "")
		do(http.MethodDelete, out.DownloadURL, "")
		rb, _ := json.Marshal(transfer.RevokeRequest{URL: out.DownloadURL})
		do(http.MethodPost, srv.URL+transfer.RevokePath, string(rb), "Content-Type", "application/json")

		// A2A: a task that cannot be recorded is a JSON-RPC error or a
		// failed task, in words, naming nothing of the server's.
		body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","kind":"message",` +
			`"parts":[{"kind":"data","data":{"skill":"echo","arguments":{"source":"data:text/plain;name=c.txt,x"}}}]}}}`
		resp, err := http.Post(srv.URL+transfer.A2APath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		if !strings.Contains(b.String(), `"code":-32603`) || !strings.Contains(b.String(), "the agent's storage") {
			t.Errorf("%v: A2A message/send = %s, want -32603 saying what failed", tc.errno, b.String())
		}
		for _, m := range []string{secretDir, secretAddr, secretBucket} {
			if strings.Contains(b.String(), m) {
				t.Errorf("%v: A2A message/send names %q: %s", tc.errno, m, b.String())
			}
		}
	}

	// Once the store works again, so does everything.
	st.broken.Store(syscall.Errno(0))
	deadline := time.Now().Add(mcptest.CallTimeout)
	for {
		resp, err := http.Get(out.DownloadURL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && string(b) == "kept" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the store recovered: %d %s", resp.StatusCode, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package appstest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/transfer"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// cutProxy forwards TCP connections to an agent and, when armed, cuts
// every connection open once the bytes sent towards the agent pass a mark:
// a dropped connection in the middle of an upload.
type cutProxy struct {
	ln     net.Listener
	target string
	sent   atomic.Int64 // bytes forwarded towards the agent
	cutAt  atomic.Int64 // 0: never
	cuts   atomic.Int64
	// holdAt, when not 0, stops forwarding once the bytes sent pass it,
	// until release is closed: a connection stalled mid-upload. held is
	// closed when the hold starts.
	holdAt        atomic.Int64
	held, release chan struct{}
	mu            sync.Mutex
	conns         map[net.Conn]bool
}

func newCutProxy(t *testing.T, ln net.Listener, target string) *cutProxy {
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close(); p.cutAll() })
	return p
}

func (p *cutProxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
}

func (p *cutProxy) cutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *cutProxy) serve(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.track(c, true)
	p.track(up, true)
	defer func() { p.track(c, false); p.track(up, false); c.Close(); up.Close() }()
	go func() { io.Copy(c, up); c.Close() }()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			total := p.sent.Add(int64(n))
			if at := p.cutAt.Load(); at > 0 && total >= at && p.cutAt.CompareAndSwap(at, 0) {
				p.cuts.Add(1)
				p.cutAll()
				return
			}
			if at := p.holdAt.Load(); at > 0 && total >= at && p.holdAt.CompareAndSwap(at, 0) {
				close(p.held)
				<-p.release
			}
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// bigFile writes size bytes of pseudo-random data and returns its path
// and sha256.
func bigFile(t *testing.T, name string, size int64, seed uint64) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	r := rand.NewChaCha8([32]byte{byte(seed)})
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(buf)) {
		r.Read(buf)
		w.Write(buf[:min(int64(len(buf)), left)])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, hex.EncodeToString(h.Sum(nil))
}

// dropFile drops the file at path on the upload view's drop zone, as a
// user drags it from the desktop.
func (b *browser) dropFile(t *testing.T, path string) {
	t.Helper()
	var frame, zone struct{ X, Y, W, H float64 }
	b.host(t, `(() => { const r = document.getElementById("view").getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, &frame)
	b.view(t, `(() => { const r = document.getElementById("drop").getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, &zone)
	x, y := frame.X+zone.X+zone.W/2, frame.Y+zone.Y+zone.H/2
	data := &input.DragData{Items: []*input.DragDataItem{}, Files: []string{path}, DragOperationsMask: 1}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
		if _, err := chromedp.Call(ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: x, Y: y, Data: data}); err != nil {
			t.Fatalf("drag %s: %v", typ, err)
		}
	}
}

// pickFile sets the file at path on the upload view's file picker.
func (b *browser) pickFile(t *testing.T, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	id, err := b.viewContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: `document.getElementById("picker")`, ContextID: id})
	if err != nil || res.Result == nil || res.Result.ObjectID == "" {
		t.Fatalf("find the picker: %v %+v", err, res)
	}
	if _, err := chromedp.Call(ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{path}, ObjectID: res.Result.ObjectID}); err != nil {
		t.Fatalf("set the picker's file: %v", err)
	}
}

// uploaded is what the upload view shows of a file once it is done.
type uploaded struct {
	Name, State, URL string
	Ref              string // the reference the view names the file by to the model
	Done             bool
	Resumed          int
}

func (b *browser) waitUpload(t *testing.T, n int, timeout time.Duration) uploaded {
	t.Helper()
	b.waitView(t, `document.querySelectorAll(".item.done, .item.failed").length >= `+itoa(n), timeout)
	var u uploaded
	b.view(t, `(() => { const i = document.querySelectorAll(".item")[`+itoa(n-1)+`];
		return { Name: i.querySelector(".fname").textContent, State: i.querySelector(".state").textContent,
			URL: i.dataset.url || "", Ref: i.dataset.ref || "", Done: i.classList.contains("done"), Resumed: Number(i.dataset.resumed || 0) }; })()`, &u)
	return u
}

// checkModelContext checks what the view told the model last
// (ui/update-model-context): the n files attached so far, the last u, each
// by its name and its reference (a file URI without token), and no signed
// URL, no token and no /files/ path anywhere in it: a bearer capability
// stays with the view.
func checkModelContext(t *testing.T, b *browser, n int, u uploaded) {
	t.Helper()
	var raw json.RawMessage
	b.host(t, "window.__host.modelContext", &raw)
	var ctxUpdate struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent struct {
			Attached []struct {
				Name string `json:"name"`
				URI  string `json:"uri"`
			} `json:"attached"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &ctxUpdate); err != nil {
		t.Fatalf("ui/update-model-context %s: %v", raw, err)
	}
	for _, capability := range []string{"token=", "/files/", u.URL} {
		if strings.Contains(string(raw), capability) {
			t.Errorf("ui/update-model-context shows the model %q: %s", capability, raw)
		}
	}
	last := ctxUpdate.StructuredContent.Attached
	if !strings.HasPrefix(u.Ref, "mcp-file://") || len(last) != n || last[n-1].Name != u.Name || last[n-1].URI != u.Ref ||
		len(ctxUpdate.Content) != 1 || !strings.Contains(ctxUpdate.Content[0].Text, u.Name) || !strings.Contains(ctxUpdate.Content[0].Text, u.Ref) {
		t.Errorf("ui/update-model-context = %s; want the %d names and references, the last %s (%s)", raw, n, u.Name, u.Ref)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// fetchSHA256 downloads url and returns the sha256 of its bytes.
func fetchSHA256(t *testing.T, url string) (string, int64) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", transfer.Redact(url), r.Status)
	}
	h := sha256.New()
	n, err := io.Copy(h, r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil)), n
}

// TestUploadView drops a 300 MiB file on the upload view of attach_file:
// it reaches the agent by tus, authorised by the capability of the tool's
// result, byte-exact; then again with the connection cut midway, resumed.
// The model is told names and references only (ui/update-model-context),
// never the signed URLs.
func TestUploadView(t *testing.T) {
	const size = 300 << 20
	b := newBrowser(t)
	// The agent's public address is a proxy that can cut connections.
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var proxy *cutProxy
	a := startAgent(t, func(svc *agentcore.Service) error { return svc.AddAttachTool() }, func(c *agentcore.Config) {
		c.MaxUploadBytes = 400 << 20
		proxy = newCutProxy(t, front, strings.TrimPrefix(c.PublicURL, "http://"))
		c.PublicURL = "http://" + front.Addr().String()
	})
	h := newHost(t, a)
	args := map[string]any{"note": "Drop the measurements you want analysed."}
	res := a.call(t, agentcore.AttachToolName, args)
	raw, _ := json.Marshal(res.Meta[transfer.MetaUploadCapability])
	var capability transfer.UploadCapability
	if err := json.Unmarshal(raw, &capability); err != nil || capability.Token == "" || capability.Endpoint != a.url+transfer.TusPath {
		t.Fatalf("attach_file _meta[%s] = %s; want a capability for %s", transfer.MetaUploadCapability, raw, a.url+transfer.TusPath)
	}
	if strings.Contains(textOf(res), capability.Token) {
		t.Error("the capability is in the text the model reads")
	}
	b.open(t, h.newSession(t, agentcore.AttachToolName, args, res, "light"))
	b.waitView(t, `document.body.dataset.ready === "1"`, 30*time.Second)

	check := func(t *testing.T, n int, name, path, sum string) uploaded {
		start := time.Now()
		u := b.waitUpload(t, n, 10*time.Minute)
		took := time.Since(start)
		if !u.Done || u.Name != name || u.URL == "" {
			t.Fatalf("the view shows %+v; want %s attached", u, name)
		}
		got, n64 := fetchSHA256(t, u.URL)
		if got != sum || n64 != size {
			t.Errorf("the agent holds %d bytes of sha256 %s; the file dropped has %d bytes of sha256 %s", n64, got, size, sum)
		}
		t.Logf("%s: %d MiB in %v (%.0f MiB/s), resumed %d times", name, size>>20, took.Round(time.Millisecond), float64(size>>20)/took.Seconds(), u.Resumed)
		checkModelContext(t, b, n, u)
		return u
	}

	t.Run("Drop", func(t *testing.T) {
		path, sum := bigFile(t, "measurements.bin", size, 1)
		b.dropFile(t, path)
		check(t, 1, "measurements.bin", path, sum)
		saveScreenshot(t, b, "apps-upload.png")
	})

	t.Run("CutMidway", func(t *testing.T) {
		path, sum := bigFile(t, "second-run.bin", size, 2)
		proxy.cutAt.Store(proxy.sent.Load() + size/2)
		b.pickFile(t, path)
		u := check(t, 2, "second-run.bin", path, sum)
		if proxy.cuts.Load() != 1 || u.Resumed < 1 {
			t.Errorf("%d cuts, %d resumptions; want the connection cut once and the upload resumed", proxy.cuts.Load(), u.Resumed)
		}
	})
}

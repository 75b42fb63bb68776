//go:build unix

package agentcore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestInputRootsMayNotReachTheDataFolder(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data", "agent")
	os.MkdirAll(data, 0o700)
	for _, root := range []string{base, filepath.Join(base, "data"), data} {
		cfg := Config{DataDir: data, InputRoots: []string{root}}
		err := cfg.normalize("test-agent", "")
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Var != "AGENT_INPUT_ROOTS" || !strings.Contains(err.Error(), "overlaps the agent's own folder") {
			t.Errorf("root %s over data %s: err = %v", root, data, err)
		}
	}
	sibling := filepath.Join(base, "inbox")
	os.Mkdir(sibling, 0o755)
	cfg := Config{DataDir: data, InputRoots: []string{sibling}}
	if err := cfg.normalize("test-agent", ""); err != nil {
		t.Errorf("a sibling folder is a fine root: %v", err)
	}
}

func TestBareWordsAreUnresolvedReferences(t *testing.T) {
	svc := newTestService(t, nil)
	call := svc.newCall("t", "alice", "")
	defer call.end()
	for _, content := range []string{"contract", "Makefile", "LICENSE", "report", "README"} {
		_, err := call.ResolveFile(context.Background(), "notes.txt", content)
		if !errors.Is(err, ErrUnresolvedReference) || !strings.Contains(err.Error(), "send it as a data URI") {
			t.Errorf("%q: err = %v", content, err)
		}
	}
	// Longer plain base64 without padding is still base64.
	data := []byte("first line\nsecond line, with ümlauts\n") // 36 bytes: no padding
	f, err := call.ResolveFile(context.Background(), "notes.txt", base64.StdEncoding.EncodeToString(data))
	if err != nil || !bytes.Equal(readFile(t, f.Path), data) {
		t.Errorf("unpadded base64: %v", err)
	}
}

func TestScheduleErrorsNeverPanic(t *testing.T) {
	for _, spec := range []string{"CRON_TZ=UTC", "@every 0s", "0 0 30 2 *"} {
		env := map[string]string{"AGENT_CLEANUP_SCHEDULE": spec}
		_, err := ConfigFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "x", ":8001")
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Var != "AGENT_CLEANUP_SCHEDULE" {
			t.Errorf("%q: err = %v", spec, err)
		}
	}
}

func TestProcessesSharingAStoreKeepTheirCallFolders(t *testing.T) {
	data := t.TempDir()
	first := newTestService(t, func(c *Config) { c.DataDir = data })
	call := first.newCall("t", "alice", "")
	defer call.end()
	in, err := call.ResolveFile(context.Background(), "", "data:text/plain;name=a.txt,kept")
	if err != nil {
		t.Fatal(err)
	}
	// A crashed process's folder: no lock held.
	abandoned := filepath.Join(data, "calls", "0123456789abcdef0123456789abcdef")
	os.MkdirAll(filepath.Join(abandoned, "x"), 0o700)

	newTestService(t, func(c *Config) { c.DataDir = data }) // a second replica, or a restart
	if got := string(readFile(t, in.Path)); got != "kept" {
		t.Errorf("the first service's input is gone: %q", got)
	}
	if _, err := os.Stat(abandoned); !os.IsNotExist(err) {
		t.Errorf("the abandoned call folder survived: %v", err)
	}
}

func TestEnumOnListsOfStrings(t *testing.T) {
	type in struct {
		Outputs []string `json:"outputs,omitempty" enum:"searchable_pdf,hocr,tsv"`
	}
	dec, err := newArgDecoder(reflect.TypeFor[in]())
	if err != nil {
		t.Fatal(err)
	}
	var got in
	if err := dec.decode(json.RawMessage(`{"outputs": ["hocr", "tsv"]}`), &got); err != nil || len(got.Outputs) != 2 {
		t.Errorf("valid list: %v %v", got, err)
	}
	if err := dec.decode(json.RawMessage(`{"outputs": ["docx"]}`), &got); err == nil {
		t.Error("a value outside the enum passed")
	}
	type bad struct {
		N int `json:"n" enum:"1,2"`
	}
	if _, _, err := InputSchema[bad](); err == nil || !strings.Contains(err.Error(), "enum tag needs a string") {
		t.Errorf("enum on an int: %v", err)
	}
	// A file is published as a string (§5), but its values are files, not
	// words of a list.
	type enumFile struct {
		F FileAttachment `json:"f" enum:"a.pdf,b.pdf"`
	}
	if _, _, err := InputSchema[enumFile](); err == nil || !strings.Contains(err.Error(), "enum tag needs a string") {
		t.Errorf("enum on a file: %v", err)
	}
	type formatFile struct {
		F FileAttachment `json:"f" schema:"pattern=^data:"`
	}
	if _, _, err := InputSchema[formatFile](); err == nil || !strings.Contains(err.Error(), "f: a schema tag does not apply to a file") {
		t.Errorf("schema tag on a file: %v", err)
	}
	type enumFiles struct {
		F []FileAttachment `json:"f" enum:"a.pdf"`
	}
	if _, _, err := InputSchema[enumFiles](); err == nil || !strings.Contains(err.Error(), "enum tag needs a string") {
		t.Errorf("enum on a list of files: %v", err)
	}
	type patternFiles struct {
		F []FileAttachment `json:"f" schema:"minItems=1;default=[]"`
	}
	if _, _, err := InputSchema[patternFiles](); err == nil || !strings.Contains(err.Error(), "f: a schema tag does not apply to a file") {
		t.Errorf("default on a list of files: %v", err)
	}
	type fileList struct {
		F []FileAttachment `json:"f" schema:"minItems=2"`
	}
	if s, _, err := InputSchema[fileList](); err != nil || s.Properties["f"].MinItems == nil || *s.Properties["f"].MinItems != 2 {
		t.Errorf("minItems on a list of files: %v", err)
	}
}

func TestPointerItemsOfFileArrays(t *testing.T) {
	type in struct {
		Ptrs []*FileAttachment `json:"ptrs"`
	}
	s, params, err := InputSchema[in]()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(params, []string{"ptrs"}) || s.Properties["ptrs"].Extra[transfer.KeywordFile] != true {
		t.Errorf("params %v, schema %+v", params, s.Properties["ptrs"])
	}
}

func TestFIFOUnderARootIsRefusedWithoutBlocking(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := newTestService(t, func(c *Config) { c.InputRoots = []string{root} })
	call := svc.newCall("t", "alice", "")
	defer call.end()
	done := make(chan error, 1)
	go func() { _, err := call.ResolveFile(context.Background(), "", "./pipe.txt"); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("opening a FIFO blocked the call")
	}
}

func TestWrappedBase64JustUnderTheCap(t *testing.T) {
	svc := newTestService(t, func(c *Config) { c.MaxUploadBytes = 3000 })
	call := svc.newCall("t", "alice", "")
	defer call.end()
	data := bytes.Repeat([]byte{0xAB}, 2990)
	f, err := call.ResolveFile(context.Background(), "x.bin", wrap(base64.StdEncoding.EncodeToString(data), 40))
	if err != nil || f.Size != 2990 {
		t.Fatalf("2990 bytes in wrapped base64 under a 3000-byte cap: %v", err)
	}
}

func TestHandingOutAResolvedInputKeepsIt(t *testing.T) {
	svc := newTestService(t, func(c *Config) { c.EmbedMaxBytes = -1 }) // AGENT_EMBED_MAX_BYTES=0: never
	call := svc.newCall("t", "alice", "")
	defer call.end()
	in, err := call.ResolveFile(context.Background(), "", "data:text/plain;name=a.txt,still here")
	if err != nil {
		t.Fatal(err)
	}
	res, err := call.FileResponse(context.Background(), OutputFile("copy.txt", in.Path), OutputBytes("empty.txt", nil))
	if err != nil {
		t.Fatal(err)
	}
	if string(readFile(t, in.Path)) != "still here" {
		t.Error("the tool's input was moved away")
	}
	for _, c := range svc.mcp.Render(context.Background(), res.outcome()).Content {
		if e, ok := c.(*mcp.EmbeddedResource); ok {
			t.Errorf("embedded %s although AGENT_EMBED_MAX_BYTES is 0 (the empty file too)", e.Resource.URI)
		}
	}
}

func TestWrongMethodsAndMissingTokensAnswerJSON(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef-test"
	_, srv := serveTestService(t, func(c *Config) { c.Auth = "jwt"; c.AuthJWTSecret = secret })
	cases := []struct {
		method, path string
		header       http.Header
		code         int
		says         string
	}{
		{"GET", "/uploads", http.Header{"Authorization": {"Bearer " + callerToken(t, secret, "a")}}, 405, "use POST"},
		{"POST", "/files/0123456789abcdef0123456789abcdef/x", nil, 405, "use GET or HEAD"},
		{"POST", "/uploads", nil, 401, "send Authorization: Bearer"},
		{"POST", "/mcp", http.Header{"Authorization": {"Bearer not.a.jwt"}}, 401, "bearer token refused"},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader("x"))
		for k, v := range tc.header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body transfer.Error
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(body.Error, tc.says) || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s = %d %q (%s)", tc.method, tc.path, resp.StatusCode, body.Error, resp.Header.Get("Content-Type"))
		}
	}
}

func TestPrivateFolderCheckSeesThroughSymlinkedParents(t *testing.T) {
	base := t.TempDir()
	inputs := filepath.Join(base, "inputs")
	os.Mkdir(inputs, 0o755)
	if err := os.Symlink(inputs, filepath.Join(base, "srv")); err != nil {
		t.Fatal(err)
	}
	// The data folder does not exist yet and lies, through srv, inside the root.
	cfg := Config{DataDir: filepath.Join(base, "srv", "agentdata"), InputRoots: []string{inputs}}
	if err := cfg.normalize("test-agent", ""); err == nil || !strings.Contains(err.Error(), "overlaps the agent's own folder") {
		t.Errorf("first start with a symlinked parent: err = %v", err)
	}
}

func TestSigningKeyFileAndInputRoots(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	keyDir := filepath.Join(base, "keys")
	os.MkdirAll(filepath.Join(keyDir, "inputs"), 0o755)
	key := filepath.Join(keyDir, "signing.key")
	os.WriteFile(key, []byte(strings.Repeat("k", 40)), 0o600)

	inside := Config{DataDir: data, SigningKeyFile: key, InputRoots: []string{filepath.Join(keyDir, "inputs")}}
	if err := inside.normalize("test-agent", ""); err != nil {
		t.Errorf("a root beside the key cannot reach it: %v", err)
	}
	holding := Config{DataDir: data, SigningKeyFile: key, InputRoots: []string{keyDir}}
	if err := holding.normalize("test-agent", ""); err == nil || !strings.Contains(err.Error(), "contains the signing key file") {
		t.Errorf("a root holding the key: err = %v", err)
	}
}

func TestWordsWithSpacesAndAccentsAreReferences(t *testing.T) {
	svc := newTestService(t, nil)
	call := svc.newCall("t", "alice", "")
	defer call.end()
	for _, content := range []string{"quarterly report", "my scan", "Rechnung_März"} {
		if _, err := call.ResolveFile(context.Background(), "x.pdf", content); !errors.Is(err, ErrUnresolvedReference) {
			t.Errorf("%q: err = %v", content, err)
		}
	}
}

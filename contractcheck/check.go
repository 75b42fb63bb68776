package contractcheck

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
	"github.com/agentura/agentura/transferclient"
)

// Target is the server to check: an MCP endpoint over streamable HTTP
// (URL), or a command that speaks MCP on stdio (Command).
type Target struct {
	// URL is the MCP endpoint, http://localhost:8001/mcp.
	URL string
	// Command is a stdio server's command and arguments; Env is added to
	// its environment, and its standard error goes to Stderr (nil: dropped).
	Command []string
	Env     []string
	Stderr  io.Writer
	// Token is a bearer token, sent to the server's origin only.
	Token string
	// BaseURL is the server's HTTP base, where /uploads lies: derived from
	// URL when empty; a stdio server has none unless given.
	BaseURL string
}

// Options tunes a check; the zero value checks the first tools that take a
// file with a file the checker makes.
type Options struct {
	// Tool is the tool to call; empty tries the tools with a file
	// parameter, up to three.
	Tool string
	// SampleFile is a file to send instead of a made-up one.
	SampleFile string
	// Arguments are given to the call besides the file (and win over the
	// values made up for required parameters).
	Arguments map[string]any
	// ServeAddr is where the checker serves the sample for the input by URL
	// when the server has no /uploads; empty means 127.0.0.1:0.
	ServeAddr string
	// ServeURL is the base of that URL as the server reaches it (a server in
	// a container: http://host.docker.internal:PORT); empty means
	// http://<the address served>.
	ServeURL string
	// AllowHosts are hosts ("host" or "host:port") besides the server's
	// origin whose URLs the check may fetch: where the server's files lie
	// when not on its origin (a bucket its downloads redirect to). The check
	// is for servers one does not trust yet, so it applies the rule of
	// agentura's hosts (transferclient.Guard): a URL the server names —
	// download_url, a descriptor of the file-transfer draft, a redirect —
	// is fetched only on the server's origin (Target.BaseURL, else the
	// URL's) or on one of these hosts; any other is not fetched, and the
	// point that needed it says so.
	AllowHosts []string
	// Timeout bounds each request to the server; 0 means two minutes.
	Timeout time.Duration
	// MaxMessageBytes caps each JSON-RPC message the server sends; 0 means
	// client.DefaultMaxMessageBytes (32 MiB). A larger one fails its point,
	// naming the server (client.LimitMessages).
	MaxMessageBytes int64
	// Logger logs what the check does; nil discards.
	Logger *slog.Logger
	// Standard checks the server by the draft MCP file contract alone,
	// SEP-2631 at modelcontextprotocol commit c3cf0eba (StandardRevision),
	// instead of by agentura's contract: its x-mcp-file declarations, files
	// sent inline and uploaded as their transferModes allow, the FileValues
	// of its results (structured content and file content blocks) resolved
	// with files/authorizeDownload, their sizes and digests, expired
	// descriptors and unknown file URIs refused; never /uploads nor a URL
	// for the server to fetch (standard.go). ServeAddr and ServeURL are not
	// used then.
	Standard bool
	// ExpiryWait is the longest the standard check waits for an upload
	// descriptor to pass its expiresAt, to see an upload to it refused; 0
	// means DefaultExpiryWait, a negative value never waits (the point is
	// skipped).
	ExpiryWait time.Duration
}

// What the check's refusals of a URL tell the user to set.
const (
	allowSetting  = "Options.AllowHosts (agentura check: --allow-host)"
	originSetting = "Target.BaseURL (agentura check: --base-url)"
)

// maxTries is how many tools with a file parameter are tried when none is
// named.
const maxTries = 3

// checker holds one check under way.
type checker struct {
	t     Target
	o     Options
	r     *Report
	s     *mcp.ClientSession
	hc    *http.Client         // every request but the session's: under guard, the token to the server's origin only
	guard transferclient.Guard // where the check may go: the server's origin (base) and Options.AllowHosts
	base  *url.URL             // nil: unknown
	// endpoint is the MCP endpoint's URL; nil for a stdio server.
	endpoint *url.URL
	// noOutputs says why no produced file is there to download, as
	// output-fields said it (outputs); "" when there are files.
	noOutputs string
	reg       *client.Registry
	log       *slog.Logger
}

// Run checks the server and returns what it found; it never fails as a
// whole: a server that cannot be reached is a report whose first point
// failed.
func Run(ctx context.Context, t Target, o Options) *Report {
	c := &checker{t: t, o: o, r: &Report{Target: cmp.Or(t.URL, strings.Join(t.Command, " "))}, log: o.Logger}
	if o.Standard {
		c.r.Standard = StandardRevision
	}
	c.o.ExpiryWait = cmp.Or(c.o.ExpiryWait, DefaultExpiryWait)
	c.log = cmp.Or(c.log, slog.New(slog.DiscardHandler))
	if c.o.Timeout <= 0 {
		c.o.Timeout = 2 * time.Minute
	}
	c.run(ctx)
	return c.r
}

func (c *checker) run(ctx context.Context) {
	if err := c.connect(ctx); err != nil {
		c.r.add(PointConnect, Fail, "%v", err)
		return
	}
	defer func() { c.s.Close() }() // the session open at the end (dial)
	if c.o.Standard {
		c.standard(ctx)
		return
	}
	reg, err := client.NewRegistry("", nil)
	if err != nil {
		c.r.add(PointConnect, Fail, "a registry for the sample: %v", err)
		return
	}
	c.reg = reg
	defer reg.Close()

	tools, ok := c.tools(ctx)
	if !ok {
		return
	}
	files := c.fileParams(tools)
	c.mcpFileObjects(tools)

	call := c.inline(ctx, tools, files)
	staged := c.uploads(ctx)
	urlRes := c.byURL(ctx, call, staged)

	res := call.res
	if len(outputFiles(res)) == 0 && len(outputFiles(urlRes)) > 0 {
		res = urlRes
	}
	outs := c.outputs(res)
	c.downloads(ctx, outs)
	c.token(ctx, outs)
	c.fileTransfer(ctx, call.smp, res)
}

// connect opens the session: the newest revision both sides speak.
func (c *checker) connect(ctx context.Context) error {
	if c.t.URL != "" {
		u, err := url.Parse(c.t.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%q is not an MCP URL such as http://localhost:8001/mcp", c.t.URL)
		}
		c.endpoint = u
		if c.t.BaseURL == "" {
			c.t.BaseURL, _ = client.BaseURLFromEndpoint(c.t.URL)
		}
	} else if len(c.t.Command) == 0 {
		return errors.New("nothing to check: give a URL or a command")
	}
	if c.t.BaseURL != "" {
		b, err := url.Parse(strings.TrimRight(c.t.BaseURL, "/"))
		if err != nil || b.Host == "" {
			return fmt.Errorf("base URL %q is not an http(s) URL", c.t.BaseURL)
		}
		c.base = b
	}
	c.guard = transferclient.Guard{Origin: c.base, AllowHosts: c.o.AllowHosts, AllowSetting: allowSetting, OriginSetting: originSetting}
	c.hc = c.guard.Client(transferclient.WithBearer(&http.Client{}, c.t.Token, c.base))
	if err := c.dial(ctx); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if ir := c.s.InitializeResult(); ir != nil {
		c.r.Protocol = ir.ProtocolVersion
		if ir.ServerInfo != nil {
			c.r.Server = strings.TrimSpace(ir.ServerInfo.Name + " " + ir.ServerInfo.Version)
		}
	}
	detail := fmt.Sprintf("%s, MCP %s", c.r.Server, c.r.Protocol)
	if c.o.Standard {
		files, _ := json.Marshal(client.FilesCapability())
		detail += fmt.Sprintf("\nthe check declared the client capability files %s (§2)", files)
	}
	c.r.add(PointConnect, Pass, "%s", detail)
	return nil
}

// dial opens a session to the target, closing the one open before: a
// server that answers a request with a plain HTTP error (rather than a
// JSON-RPC one) leaves the go-sdk's connection broken, and the check goes
// on over a new one. Its client declares the draft's files capability
// (client.DeclareFiles), and its transport makes answers with content
// blocks the go-sdk cannot decode (the draft's §8 file block) readable,
// keeping each block as sent under _meta[transfer.MetaContent]
// (client.WithTasks, client.ReadableTransport).
func (c *checker) dial(ctx context.Context) error {
	mc := mcp.NewClient(&mcp.Implementation{Name: "agentura-check", Version: "1"}, &mcp.ClientOptions{Logger: c.log})
	client.RegisterFileMethods(mc) // files/authorize*, and the files capability declared
	client.Trace(mc)               // with OTEL_* set, the server's spans join the check's trace
	var tr mcp.Transport
	if c.endpoint != nil {
		// The session stays on the endpoint's origin too: a redirect off it
		// would post the session's messages elsewhere.
		session := transferclient.Guard{Origin: c.endpoint, AllowHosts: c.o.AllowHosts, AllowSetting: allowSetting}
		hc := client.WithTasks(session.Client(transferclient.WithBearer(nil, c.t.Token, c.endpoint)))
		tr = client.LimitMessages(&mcp.StreamableClientTransport{Endpoint: c.t.URL, HTTPClient: hc, DisableStandaloneSSE: true}, c.o.MaxMessageBytes)
	} else {
		cmd := exec.Command(c.t.Command[0], c.t.Command[1:]...)
		cmd.Env = append(os.Environ(), c.t.Env...)
		cmd.Stderr = c.t.Stderr
		tr = client.ReadableTransport(client.LimitMessages(&mcp.CommandTransport{Command: cmd}, c.o.MaxMessageBytes))
	}
	cctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	s, err := mc.Connect(cctx, tr, nil)
	if err != nil {
		return err
	}
	if c.s != nil {
		c.s.Close()
	}
	c.s = s
	return nil
}

// redial opens a new session after err, when err is a plain HTTP answer
// that broke the one open (httpRefusal); it says whether it did.
func (c *checker) redial(ctx context.Context, err error) bool {
	if _, ok := httpRefusal(err); !ok {
		return false
	}
	if derr := c.dial(ctx); derr != nil {
		c.log.Warn("a new session after a plain HTTP answer", "err", derr)
		return false
	}
	return true
}

// httpRefusal reports whether err is the go-sdk's error for a request
// answered with a plain HTTP error status (no JSON-RPC answer), and names
// the status. A server answers so, for one, a method it does not know
// (the go-sdk's server: 400 Bad Request); the draft's §10 asks for
// JSON-RPC's "method not found" (-32601).
func httpRefusal(err error) (string, bool) {
	var rpc *jsonrpc.Error
	if err == nil || errors.As(err, &rpc) {
		return "", false
	}
	if errors.Is(err, mcp.ErrSessionMissing) {
		return "404 Not Found (the session is gone)", true
	}
	s := err.Error()
	for code := 400; code < 600; code++ {
		if text := http.StatusText(code); text != "" && strings.HasSuffix(s, ": "+text) {
			return fmt.Sprintf("%d %s", code, text), true
		}
	}
	return "", false
}

// tools lists the server's tools by name and reports the tools point; ok
// is false when tools/list failed.
func (c *checker) tools(ctx context.Context) (tools []*mcp.Tool, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	for t, err := range c.s.Tools(ctx, nil) {
		if err != nil {
			c.r.add(PointTools, Fail, "tools/list: %v", err)
			return nil, false
		}
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	c.r.add(PointTools, Pass, "%s", count(len(tools), "tool"))
	return tools, true
}

// noSuchTool reports the input-inline point failed for Options.Tool, which
// names no tool of the server or one without a file input (why).
func (c *checker) noSuchTool(tools []*mcp.Tool, why string) {
	if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == c.o.Tool }) {
		why = "the server has no such tool"
	}
	c.r.add(PointInline, Fail, "--tool %s: %s", c.o.Tool, why)
}

// fileParams reports the tools' marked file parameters and returns them by
// tool.
func (c *checker) fileParams(tools []*mcp.Tool) map[string][]client.FileField {
	files := map[string][]client.FileField{}
	var lines []string
	for _, t := range tools {
		fields, err := client.FileFields(t.InputSchema)
		if err != nil || len(fields) == 0 {
			continue
		}
		files[t.Name] = fields
		var paths []string
		for _, f := range fields {
			paths = append(paths, f.Path)
		}
		lines = append(lines, t.Name+": "+strings.Join(paths, ", "))
	}
	if len(files) == 0 {
		c.r.add(PointFileParams, Fail, "no tool marks a parameter with \"x-file\": true or \"x-mcp-file\" (%s listed): a host cannot tell which arguments are files, and sends the model's text; a server whose tools take no file has nothing of this contract to check", count(len(tools), "tool"))
		return files
	}
	if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return hasKeyword(decodeSchema(t.InputSchema), transfer.KeywordFile) }) {
		lines = append(lines, "(x-mcp-file alone: a server of the draft MCP file contract, which `agentura check --standard` judges by SEP-2631 alone)")
	}
	c.r.add(PointFileParams, Pass, "%s", strings.Join(lines, "\n"))
	return files
}

// hasKeyword reports whether a schema node carries keyword anywhere below
// it (a value other than false).
func hasKeyword(n node, keyword string) bool {
	found := false
	walkKeyword(n, keyword, "", func(_ string, holder node) {
		if v := holder[keyword]; v != nil && v != false {
			found = true
		}
	})
	return found
}

// mcpFileObjects checks every x-mcp-file marker: the draft's object (a
// boolean, agentura's older form, declares nothing to its hosts) whose accept is a list of MIME types (or extensions), maxSize a size in
// bytes and transferModes a list of names.
func (c *checker) mcpFileObjects(tools []*mcp.Tool) {
	var objects, flags int
	var bad []string
	for _, t := range tools {
		walkKeyword(decodeSchema(t.InputSchema), mcpfile.Keyword, "", func(at string, holder node) {
			at, v := strings.TrimPrefix(at, "."), holder[mcpfile.Keyword]
			switch x := v.(type) {
			case bool:
				flags++
				bad = append(bad, fmt.Sprintf("%s.%s: x-mcp-file is %s; the draft (SEP-2631 at c3cf0eba) and its reference host read an object {accept, maxSize, transferModes}, and a boolean declares nothing to them", t.Name, at, jsonOf(v)))
			case node:
				objects++
				bad = append(bad, badMCPFile(t.Name+"."+at, x)...)
			default:
				bad = append(bad, fmt.Sprintf("%s.%s: x-mcp-file is %s; want an object {accept, maxSize, transferModes}", t.Name, at, jsonOf(v)))
			}
		})
	}
	var good []string // none without objects; a boolean marker is in bad
	if objects > 0 {
		good = []string{count(objects, "x-mcp-file object")}
	}
	c.r.verdictOr(PointMCPFile, bad, good, NotOffered, "no x-mcp-file marker (x-file alone is enough for this contract)")
}

var mimePattern = regexp.MustCompile(`^([a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+*-]+|\.[a-z0-9]+)$`)

// badMCPFile lists what is wrong with an x-mcp-file object.
func badMCPFile(at string, o node) []string {
	var bad []string
	if v, ok := o["accept"]; ok {
		list, isList := v.([]any)
		if !isList {
			bad = append(bad, fmt.Sprintf("%s: accept is %s; want a list of MIME types such as [\"image/png\", \"image/*\"]", at, jsonOf(v)))
		}
		for _, a := range list {
			if s, ok := a.(string); !ok || !mimePattern.MatchString(strings.ToLower(s)) {
				bad = append(bad, fmt.Sprintf("%s: accept holds %s, not a MIME type (type/subtype, type/*) or an extension (.pdf)", at, jsonOf(a)))
			}
		}
	}
	if v, ok := o["maxSize"]; ok {
		if f, isNum := v.(float64); !isNum || f < 0 || f != float64(int64(f)) {
			bad = append(bad, fmt.Sprintf("%s: maxSize is %s; want a size in bytes", at, jsonOf(v)))
		}
	}
	if v, ok := o["transferModes"]; ok {
		list, isList := v.([]any)
		if !isList {
			bad = append(bad, fmt.Sprintf("%s: transferModes is %s; want a list such as [\"inline\", \"upload\"]", at, jsonOf(v)))
		}
		for _, m := range list {
			if _, ok := m.(string); !ok {
				bad = append(bad, fmt.Sprintf("%s: transferModes holds %s, not a name", at, jsonOf(m)))
			}
		}
	}
	return bad
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// called is the call that passed the inline point: its tool, arguments
// (with the sample inline) and result.
type called struct {
	tool  *mcp.Tool
	field string
	smp   sample
	args  any // rewritten: the sample as a data: URI
	res   *mcp.CallToolResult
}

// inline sends the sample inline to the tools with a file parameter, up to
// maxTries (or the one named), and keeps the first that answers, preferring
// one that produces a file.
func (c *checker) inline(ctx context.Context, tools []*mcp.Tool, files map[string][]client.FileField) called {
	var tries []*mcp.Tool
	for _, t := range tools {
		if (c.o.Tool == "" || t.Name == c.o.Tool) && len(files[t.Name]) > 0 {
			tries = append(tries, t)
		}
	}
	if c.o.Tool != "" && len(tries) == 0 {
		c.noSuchTool(tools, "it has no file parameter")
		return called{}
	}
	if len(tries) == 0 {
		c.r.add(PointInline, Skip, "no tool has a file parameter to send a file to")
		return called{}
	}
	if len(tries) > maxTries {
		tries = tries[:maxTries]
	}
	var first called
	var failures []string
	for _, t := range tries {
		cl, err := c.callInline(ctx, t, files[t.Name])
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s (%s as %s): %v", t.Name, cl.smp.name, cl.field, err))
			continue
		}
		if len(outputFiles(cl.res)) > 0 {
			first = cl
			break
		}
		// A result with the draft's FileValues alone comes next: its files
		// are seen, and output-fields says what this contract wants of them.
		if first.res == nil || firstFileValue(first.res) == "" && firstFileValue(cl.res) != "" {
			first = cl
		}
	}
	if first.res == nil {
		c.r.add(PointInline, Fail, "%s", strings.Join(failures, "\n"))
		return first
	}
	c.r.Tool, c.r.Parameter = first.tool.Name, first.field
	c.r.Sample = describeSample(first.smp)
	detail := fmt.Sprintf("%s resolved %s sent as a data: URI in %s", first.tool.Name, first.smp.name, first.field)
	if !hasDataURI(first.args) {
		detail = fmt.Sprintf("%s resolved %s sent in %s as the draft's file URI, through files/authorizeUpload (its transferModes allow no inline file)", first.tool.Name, first.smp.name, first.field)
	}
	if len(failures) > 0 {
		detail += "\nbefore it: " + strings.Join(failures, "\n")
	}
	c.r.add(PointInline, Pass, "%s", detail)
	return first
}

// callInline calls tool with the sample, inline, in its first file field.
func (c *checker) callInline(ctx context.Context, tool *mcp.Tool, fields []client.FileField) (called, error) {
	root := decodeSchema(tool.InputSchema)
	field := fields[0]
	cl := called{tool: tool, field: field.Path}
	fn, _ := fieldNode(root, field.Path)
	smp, err := c.sample(fn, tool)
	if err != nil {
		return cl, err
	}
	cl.smp = smp
	e, err := c.reg.Add(ctx, smp.name, bytes.NewReader(smp.data), client.SourceUpload)
	if err != nil {
		return cl, err
	}
	base := "" // the server's HTTP base as the client package takes it: none when unknown
	if c.base != nil {
		base = c.base.String()
	}
	mw, err := client.New(client.Config{Registry: c.reg, BaseURL: base, HTTPClient: c.hc, AllowHosts: c.o.AllowHosts, InlineMaxBytes: 1 << 40})
	if err != nil {
		return cl, err
	}
	mw.UseSession(c.s) // a field of the draft that takes uploads only goes through files/authorizeUpload
	args, err := mw.RewriteArguments(ctx, tool, buildArgs(root, field.Path, e.Name, c.o.Arguments))
	if err != nil {
		return cl, fmt.Errorf("arguments: %w", err)
	}
	cl.args = args
	cl.res, err = c.call(ctx, tool.Name, args)
	return cl, err
}

// sample is the file to send to the parameter n of tool: the user's, or
// one of a type the parameter accepts.
func (c *checker) sample(n node, tool *mcp.Tool) (sample, error) {
	if c.o.SampleFile != "" {
		b, err := os.ReadFile(c.o.SampleFile)
		if err != nil {
			return sample{}, fmt.Errorf("the sample file: %w", err)
		}
		mt := http.DetectContentType(b)
		return sample{name: filepath.Base(c.o.SampleFile), mime: strings.Split(mt, ";")[0], data: b}, nil
	}
	return makeSample(guessKind(inputOf(n[mcpfile.Keyword]).Accept, describe(n), tool.Description)), nil
}

// call calls a tool; a tool error is an error with the tool's text.
func (c *checker) call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	res, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return res, fmt.Errorf("the tool answered with an error: %s", clip(textOf(res), 400))
	}
	return res, nil
}

// uploads stages the sample with POST <base>/uploads, as the contract's
// agents offer, and returns the staged file's URL ("" when not offered).
func (c *checker) uploads(ctx context.Context) string {
	entries := c.reg.Entries() // by name, as the registry lists them
	if len(entries) == 0 {
		c.r.add(PointUploads, Skip, "no sample was made (no tool takes a file)")
		return ""
	}
	e := entries[0]
	if c.base == nil {
		c.r.add(PointUploads, NotOffered, "the server's HTTP base is unknown (a stdio server: give its base URL to check /uploads)")
		return ""
	}
	f, err := os.Open(e.Path)
	if err != nil {
		c.r.add(PointUploads, Skip, "%v", err)
		return ""
	}
	defer f.Close()
	endpoint := c.base.JoinPath(transfer.UploadsPath).String()
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, f)
	req.ContentLength = e.Size
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set(transfer.HeaderFilename, "UTF-8''"+url.PathEscape(e.Name))
	resp, err := c.hc.Do(req)
	if err != nil {
		c.r.add(PointUploads, Fail, "POST %s: %v", endpoint, err)
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		c.uploadRefused(ctx, endpoint, resp)
		return ""
	}
	var up transfer.Upload
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&up); err != nil {
		c.r.add(PointUploads, Fail, "POST %s: the answer is not the JSON {url, name, size_bytes, mime_type}: %v", endpoint, err)
		return ""
	}
	var missing []string
	if u, err := url.Parse(up.URL); up.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		missing = append(missing, "url (an http(s) URL)")
	}
	if up.Name == "" {
		missing = append(missing, "name")
	}
	if up.SizeBytes != e.Size {
		missing = append(missing, fmt.Sprintf("size_bytes (%d, sent %d)", up.SizeBytes, e.Size))
	}
	if up.MIMEType == "" {
		missing = append(missing, "mime_type")
	}
	if len(missing) > 0 {
		c.r.add(PointUploads, Fail, "POST %s answered %s without a right %s", endpoint, resp.Status, strings.Join(missing, ", "))
		return ""
	}
	c.r.add(PointUploads, Pass, "%s answered %s with {url, name, size_bytes, mime_type}", transfer.UploadsPath, resp.Status)
	return up.URL
}

// uploadRefused reports a POST /uploads that did not stage the sample.
// A server whose agent card declares the endpoint (agentura's agents:
// transfer.A2AUploadsExtension) fails whatever it answered. One that
// declares none does not offer it when the answer is no upload endpoint's:
// 404 or 405, or a 400, 406 or 415 without the contract's {"error": …}
// (an MCP handler answering every path refuses the raw body as no
// JSON-RPC message; the go-sdk's: 415, "Content-Type must be
// 'application/json'"). An upload endpoint's refusal and a server error
// fail.
func (c *checker) uploadRefused(ctx context.Context, endpoint string, resp *http.Response) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	var refusal transfer.Error
	shaped := json.Unmarshal(body, &refusal) == nil && refusal.Error != ""
	answer := resp.Status
	switch text := clip(strings.TrimSpace(string(body)), 120); {
	case shaped:
		answer += ": " + refusal.Error
	case text != "":
		answer += " (" + text + ")"
	}
	if card := c.cardDeclaresUploads(ctx); card != "" {
		c.r.add(PointUploads, Fail, "POST %s answered %s, but the server declares the endpoint (%s): it should stage the file and answer {url, name, size_bytes, mime_type}", endpoint, answer, card)
		return
	}
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		c.r.add(PointUploads, NotOffered, "the server has no upload endpoint: POST %s answered %s, and its agent card declares none; large files must then go by a URL the server fetches", endpoint, answer)
		return
	case http.StatusBadRequest, http.StatusNotAcceptable, http.StatusUnsupportedMediaType:
		if !shaped {
			c.r.add(PointUploads, NotOffered, "the server has no upload endpoint: POST %s answered %s, not the contract's {\"error\": …} (an MCP handler answering every path, say), and its agent card declares none; large files must then go by a URL the server fetches", endpoint, answer)
			return
		}
	}
	c.r.add(PointUploads, Fail, "POST %s answered %s", endpoint, answer)
}

// cardDeclaresUploads says where the server declares POST /uploads: its
// A2A agent card (transfer.AgentCardPath on its origin) naming the
// extension transfer.A2AUploadsExtension, as agentura's agents do; "" when
// it declares none (no card, or a card without it).
func (c *checker) cardDeclaresUploads(ctx context.Context) string {
	u := c.base.JoinPath(transfer.AgentCardPath).String()
	resp, body, err := c.get(ctx, u)
	if err != nil || resp.StatusCode != http.StatusOK {
		return ""
	}
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI string `json:"uri"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(body, &card) != nil {
		return ""
	}
	for _, ext := range card.Capabilities.Extensions {
		if ext.URI == transfer.A2AUploadsExtension {
			return "its agent card " + transfer.AgentCardPath + " names the extension " + transfer.A2AUploadsExtension
		}
	}
	return ""
}

// byURL calls the tool again with the sample given by URL: the staged
// upload's when there is one, else one the checker serves.
func (c *checker) byURL(ctx context.Context, cl called, staged string) *mcp.CallToolResult {
	if cl.res == nil {
		c.r.add(PointURL, Skip, "no tool call succeeded with the file inline (input-inline)")
		return nil
	}
	if fn, _ := fieldNode(decodeSchema(cl.tool.InputSchema), cl.field); !marked(fn, transfer.KeywordFile) {
		c.r.add(PointURL, NotOffered, "%s.%s is declared by x-mcp-file alone: the draft (SEP-2631) takes a data: URI or a file URI there, not a URL for the server to fetch", cl.tool.Name, cl.field)
		return nil
	}
	if !hasDataURI(cl.args) {
		c.r.add(PointURL, Skip, "the file did not go to %s.%s as a data: URI, so there is none to give by URL instead", cl.tool.Name, cl.field)
		return nil
	}
	how := "a URL of the server's own /uploads"
	link := staged
	if link == "" {
		srv, u, err := c.serve(cl.smp)
		if err != nil {
			c.r.add(PointURL, Skip, "serve the sample: %v", err)
			return nil
		}
		defer srv.Close()
		link, how = u, "a URL the checker serves ("+u+")"
	}
	args := replaceDataURIs(cl.args, link)
	res, err := c.call(ctx, cl.tool.Name, args)
	if err != nil {
		hint := ""
		if staged == "" {
			hint = "\n(a server that guards its fetches refuses loopback URLs: give the checker an address the server may fetch, or allow it)"
		}
		c.r.add(PointURL, Fail, "%s with %s sent by %s: %v%s", cl.tool.Name, cl.smp.name, how, err, hint)
		return nil
	}
	c.r.add(PointURL, Pass, "%s resolved %s sent by %s", cl.tool.Name, cl.smp.name, how)
	return res
}

// serve serves the sample over HTTP for the input by URL.
func (c *checker) serve(s sample) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", cmp.Or(c.o.ServeAddr, "127.0.0.1:0"))
	if err != nil {
		return nil, "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/"+s.name, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", s.mime)
		w.Write(s.data)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv, strings.TrimRight(cmp.Or(c.o.ServeURL, "http://"+ln.Addr().String()), "/") + "/" + s.name, nil
}

// marked reports whether the schema node n, or its items, carries the
// keyword (x-file) with a value other than false.
func marked(n node, keyword string) bool {
	for _, x := range []node{n, asNode(n["items"])} {
		if v, ok := x[keyword]; ok && v != nil && v != false {
			return true
		}
	}
	return false
}

// hasDataURI reports whether args hold a data: URI: whether replacing
// them changes args.
func hasDataURI(args any) bool {
	return jsonOf(replaceDataURIs(args, "")) != jsonOf(args)
}

// replaceDataURIs returns a copy of args with every data: URI replaced by
// link.
func replaceDataURIs(args any, link string) any {
	switch x := args.(type) {
	case string:
		if strings.HasPrefix(strings.ToLower(x), "data:") {
			return link
		}
	case map[string]any:
		out := map[string]any{}
		for k, v := range x {
			out[k] = replaceDataURIs(v, link)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = replaceDataURIs(v, link)
		}
		return out
	}
	return args
}

func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// count says n things: "1 tool", "3 tools".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// output is a produced file as a result announces it.
type output struct {
	fields map[string]any
	url    string
	name   string
	mime   string
	size   int64
	sha256 string
}

// outputFiles reads the produced files of a result's structured content:
// the object itself when it has download_url, or the items of "files".
func outputFiles(res *mcp.CallToolResult) []map[string]any {
	if res == nil {
		return nil
	}
	sc := res.StructuredContent
	if raw, ok := sc.(json.RawMessage); ok {
		json.Unmarshal(raw, &sc)
	}
	m, _ := sc.(map[string]any)
	if _, ok := m["download_url"]; ok {
		return []map[string]any{m}
	}
	var out []map[string]any
	list, _ := m["files"].([]any)
	for _, f := range list {
		if fm, ok := f.(map[string]any); ok {
			out = append(out, fm)
		}
	}
	return out
}

var hexDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// outputs checks the produced files' fields and links, and returns those
// whose fields allow a download.
func (c *checker) outputs(res *mcp.CallToolResult) []output {
	files := outputFiles(res)
	if len(files) == 0 {
		why := "the tool called produced no file: name one that does with --tool (and its arguments with --args)"
		if res == nil {
			why = "no tool was called with a file (input-inline), so there is no result to read produced files from"
		}
		named := res != nil && slices.ContainsFunc(res.Content, func(ct mcp.Content) bool {
			_, link := ct.(*mcp.ResourceLink)
			_, emb := ct.(*mcp.EmbeddedResource)
			return link || emb
		})
		switch fvs := resultFiles(res); {
		case len(fvs) > 0:
			var names []string
			for _, f := range fvs {
				names = append(names, f.fv.URI)
			}
			c.r.add(PointOutputFields, Fail, "the result names files as the draft's FileValues (%s) but has no download_url: this contract gives {download_url, filename, mime_type, size_bytes, sha256} beside them; agentura's hosts fetch a FileValue alone with files/authorizeDownload (file-transfer), and `agentura check --standard` judges a server by SEP-2631 alone",
				strings.Join(names, ", "))
			why = "the result's files have no download_url (output-fields)"
		case named:
			c.r.add(PointOutputFields, Fail, "the result names a file (resource_link or embedded resource) but its structuredContent has no download_url: give {download_url, filename, mime_type, size_bytes, sha256}, flat for one file or under \"files\"")
			why = "the result's files have no download_url (output-fields)"
		default:
			c.r.add(PointOutputFields, Skip, "%s", why)
		}
		c.r.add(PointOutputLinks, Skip, "%s", why)
		c.noOutputs = why
		return nil
	}
	var outs []output
	var bad, good []string
	for i, f := range files {
		o := output{fields: f}
		o.url, _ = f["download_url"].(string)
		o.name, _ = f["filename"].(string)
		o.mime, _ = f["mime_type"].(string)
		o.sha256, _ = f["sha256"].(string)
		what := fmt.Sprintf("file %d (%s)", i+1, o.name)
		var wrong []string
		if u, err := url.Parse(o.url); o.url == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			wrong = append(wrong, "download_url (an absolute http(s) URL)")
		}
		if o.name == "" || strings.HasPrefix(o.name, "/") || slices.Contains(strings.Split(o.name, "/"), "..") {
			wrong = append(wrong, "filename (a name, or a relative path without ..)")
		}
		if !mimePattern.MatchString(strings.ToLower(strings.Split(o.mime, ";")[0])) || strings.HasPrefix(o.mime, ".") {
			wrong = append(wrong, "mime_type (type/subtype)")
		}
		if n, ok := f["size_bytes"].(float64); !ok || n < 0 || n != float64(int64(n)) {
			wrong = append(wrong, "size_bytes (a whole number of bytes)")
			o.size = -1
		} else {
			o.size = int64(n)
		}
		if !hexDigest.MatchString(o.sha256) {
			wrong = append(wrong, "sha256 (64 lowercase hex digits)")
		}
		if len(wrong) > 0 {
			bad = append(bad, what+": missing or wrong "+strings.Join(wrong, ", "))
		} else {
			good = append(good, fmt.Sprintf("%s: %s, %d bytes", o.name, o.mime, o.size))
		}
		if o.url != "" {
			outs = append(outs, o)
		}
	}
	c.r.verdict(PointOutputFields, bad, good)
	c.links(res, outs)
	return outs
}

// links checks a resource_link and a "Tool produced:" line per file.
func (c *checker) links(res *mcp.CallToolResult, outs []output) {
	var links []*mcp.ResourceLink
	for _, ct := range res.Content {
		if l, ok := ct.(*mcp.ResourceLink); ok {
			links = append(links, l)
		}
	}
	text := textOf(res)
	var bad []string
	for _, l := range links {
		// The check fetches no resource_link, but hosts fetch every http(s)
		// one (as a produced file), under the rule the check applies.
		if u, err := url.Parse(l.URI); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			if err := c.guard.Check(u); err != nil {
				bad = append(bad, fmt.Sprintf("resource_link %s: not fetched, by hosts nor by the check: %v", transfer.Redact(l.URI), err))
			}
		}
	}
	for _, o := range outs {
		if !slices.ContainsFunc(links, func(l *mcp.ResourceLink) bool { return samePath(l.URI, o.url) }) {
			bad = append(bad, o.name+": no resource_link to its download_url")
		}
		if !strings.Contains(text, transfer.ProducedPrefix+path1(o.name)) && !strings.Contains(text, transfer.ProducedPrefix+o.name) {
			bad = append(bad, fmt.Sprintf("%s: no text line \"%s%s (…) <url>\" for models without a host's help", o.name, transfer.ProducedPrefix, o.name))
		}
	}
	c.r.verdict(PointOutputLinks, bad, []string{count(len(outs), "resource_link") + " and " + count(len(outs), fmt.Sprintf("%q line", strings.TrimSpace(transfer.ProducedPrefix)))})
}

// path1 is the last segment of a slash path.
func path1(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// samePath reports whether two URLs name the same resource, tokens aside.
func samePath(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && ua.Host == ub.Host && ua.Path == ub.Path
}

// maxDownload caps each download of the check.
const maxDownload = 256 << 20

// downloads fetches each produced file and compares it with what the
// result announced, and the answer's headers with the contract's.
func (c *checker) downloads(ctx context.Context, outs []output) {
	if len(outs) == 0 {
		why := cmp.Or(c.noOutputs, "no produced file to download")
		c.r.add(PointDownload, Skip, "%s", why)
		c.r.add(PointHeaders, Skip, "%s", why)
		return
	}
	var bad, good, badH, goodH []string
	for _, o := range outs {
		resp, body, err := c.download(ctx, o.url)
		if errors.Is(err, transferclient.ErrForeignURL) {
			bad = append(bad, fmt.Sprintf("%s: not fetched: %v", o.name, err))
			continue
		}
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", o.name, err))
			continue
		}
		sum := sha256.Sum256(body)
		got := hex.EncodeToString(sum[:])
		var wrong []string
		if o.size >= 0 && int64(len(body)) != o.size {
			wrong = append(wrong, fmt.Sprintf("%d bytes, announced %d", len(body), o.size))
		}
		if o.sha256 != "" && got != o.sha256 {
			wrong = append(wrong, fmt.Sprintf("sha256 %s, announced %s", got, o.sha256))
		}
		if len(wrong) > 0 {
			bad = append(bad, o.name+": "+strings.Join(wrong, "; "))
		} else {
			good = append(good, fmt.Sprintf("%s: %d bytes, sha256 as announced", o.name, len(body)))
		}
		var h []string
		if cd := strings.ToLower(resp.Header.Get("Content-Disposition")); !strings.HasPrefix(cd, "attachment") {
			h = append(h, fmt.Sprintf("Content-Disposition %q, want attachment; filename=…", resp.Header.Get("Content-Disposition")))
		}
		if !strings.EqualFold(resp.Header.Get("X-Content-Type-Options"), "nosniff") {
			h = append(h, "no X-Content-Type-Options: nosniff")
		}
		if ct := strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0]); o.mime != "" && !strings.EqualFold(ct, strings.Split(o.mime, ";")[0]) {
			h = append(h, fmt.Sprintf("Content-Type %q, announced %q", ct, o.mime))
		}
		if len(h) > 0 {
			badH = append(badH, o.name+": "+strings.Join(h, "; "))
		} else {
			goodH = append(goodH, o.name+": attachment, nosniff, "+o.mime)
		}
	}
	c.r.verdict(PointDownload, bad, good)
	c.r.verdictOr(PointHeaders, badH, goodH, Skip, "no download answered")
}

// download GETs a produced file the way agentura's hosts do
// (transferclient.Guard.Get: on the server's origin or an allowed host, on
// every redirect too; 200 only; capped) and reads it.
func (c *checker) download(ctx context.Context, u string) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	resp, err := c.guard.Get(ctx, c.hc, u, maxDownload)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp, nil, fmt.Errorf("GET %s: %w", transfer.Redact(u), err)
	}
	return resp, body, nil
}

// refused is the guard's refusal of rawURL, nil when the check may fetch
// it.
func (c *checker) refused(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%q is not a URL", transfer.Redact(rawURL))
	}
	return c.guard.Check(u)
}

// get GETs u through c.hc (under the guard, whatever the answer's status)
// and reads its body (capped).
func (c *checker) get(ctx context.Context, u string) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error // names the last URL asked for, a redirect's with its query
		if errors.As(err, &ue) {
			ue.URL = transfer.Redact(ue.URL)
		}
		return nil, nil, fmt.Errorf("GET %s: %w", transfer.Redact(u), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return resp, nil, fmt.Errorf("GET %s: %w", transfer.Redact(u), err)
	}
	if len(body) > maxDownload {
		return resp, nil, fmt.Errorf("GET %s: more than %d bytes", transfer.Redact(u), maxDownload)
	}
	return resp, body, nil
}

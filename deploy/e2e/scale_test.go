//go:build e2e

package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// scaleDeployment is one run of deploy/docker-compose.scale.yml: the S3
// server and two composer replicas, each reached on its own host port.
type scaleDeployment struct {
	*deployment
	env        []string // the env file's lines: Compose v1 interpolates ${...} on every command
	publicURL  string   // AGENT_PUBLIC_URL of every replica: the balancer's HTTPS address
	aURL, bURL string   // the first two replicas' own bases (their addresses in the network)
	replicas   []replica
	s3URL      string // S3_PUBLIC_ENDPOINT: where a redirect sends clients
	lbURL      string // the balancer's HTTPS base
	ocrLBURL   string // the balancer's HTTPS base of the OCR replicas (their public URL)
	opts       scaleOptions
	lbHTTPURL  string // the balancer's plain HTTP base (redirects only)
	tlsDir     string // the local CA (ca.pem) and the balancer's lb.pem
}

// startScale writes an env file from deploy/.env.scale.example with fresh
// secrets, free ports, a balancer certificate from a fresh local CA and this
// run's project, brings the project up with scaleReplicas composer replicas
// (as `make up-scale` with SCALE_REPLICAS) and waits for every health check.
// The balancer's HTTPS address is the public URL; this process and the
// programs it runs trust the local CA. The project is always taken down
// again, volumes included. IMAGE_TAG picks the images' tag (default latest,
// as `make images`). embed sets AGENT_EMBED_MAX_BYTES.
func startScale(t *testing.T, embed string) *scaleDeployment {
	t.Helper()
	return startScaleWith(t, scaleOptions{embed: embed, project: runProject("scale"), composer: scaleReplicas})
}

// scaleOptions are what a run of the scale-out deployment varies.
type scaleOptions struct {
	embed    string            // AGENT_EMBED_MAX_BYTES
	project  string            // the Compose project (deploy/e2e.sh tears it down too)
	composer int               // composer replicas
	ocr      int               // OCR replicas
	env      map[string]string // further settings of the env file
	// makeUp brings it up by the transcript of make up-scale in
	// docs/deployment.md (with the env file's settings in the environment,
	// over those of the SCALE_ENV make writes) instead of compose up.
	makeUp bool
}

// startScaleWith is startScale with the options o.
func startScaleWith(t *testing.T, o scaleOptions) *scaleDeployment {
	t.Helper()
	embed := o.embed
	requireDocker(t)
	root := repoRoot(t)
	tag := os.Getenv("IMAGE_TAG")
	if tag == "" {
		tag = "latest"
	}
	s3Port, lbPort, lbHTTPPort, lbOCRPort := freePort(t), freePort(t), freePort(t), freePort(t)
	s := &scaleDeployment{
		deployment: &deployment{
			root:    root,
			file:    filepath.Join(root, "deploy", "docker-compose.scale.yml"),
			envFile: filepath.Join(t.TempDir(), "scale.env"),
			project: o.project,
			compose: composeCommand(t),
		},
		opts: o,
	}
	s.lbURL = "https://localhost:" + strconv.Itoa(lbPort)
	s.ocrLBURL = "https://localhost:" + strconv.Itoa(lbOCRPort)
	s.lbHTTPURL = "http://localhost:" + strconv.Itoa(lbHTTPPort)
	s.publicURL = s.lbURL
	s.tlsDir = filepath.Join(t.TempDir(), "tls")
	if !o.makeUp { // make up-scale makes it
		run(t, nil, filepath.Join(root, "deploy", "scale-tls.sh"), s.tlsDir)
		trustCA(t, filepath.Join(s.tlsDir, "ca.pem"))
	}
	s.s3URL = "http://localhost:" + strconv.Itoa(s3Port)
	example, err := os.ReadFile(filepath.Join(root, "deploy", ".env.scale.example"))
	must(t, err, "read deploy/.env.scale.example")
	set := map[string]string{
		"COMPOSE_PROJECT_NAME":  s.project,
		"COMPOSER_IMAGE":        "agentura/composer-agent:" + tag,
		"OCR_IMAGE":             "agentura/ocr-agent:" + tag,
		"LB_OCR_HTTPS_PORT":     strconv.Itoa(lbOCRPort),
		"SCALE_OCR_PUBLIC_URL":  s.ocrLBURL,
		"S3_IMAGE":              "agentura/s3:" + tag,
		"LB_IMAGE":              "agentura/lb:" + tag,
		"LB_HTTPS_PORT":         strconv.Itoa(lbPort),
		"LB_HTTP_PORT":          strconv.Itoa(lbHTTPPort),
		"SCALE_TLS_DIR":         s.tlsDir,
		"SCALE_SIGNING_KEY":     randomHex(t, 32),
		"S3_ACCESS_KEY":         randomHex(t, 10),
		"S3_SECRET_KEY":         randomHex(t, 20),
		"S3_PORT":               strconv.Itoa(s3Port),
		"SCALE_PUBLIC_URL":      s.publicURL,
		"S3_PUBLIC_ENDPOINT":    s.s3URL,
		"AGENT_EMBED_MAX_BYTES": embed,
		// Every request logged, with the client address the replica believes.
		"AGENT_LOG_LEVEL": "debug",
		// The load test's clients all come from this host, one address to
		// the replicas: the rate limit would be what is measured.
		"AGENT_RATE_LIMIT": "0",
	}
	for k, v := range o.env {
		set[k] = v
	}
	env := string(example)
	for k, v := range set {
		re := regexp.MustCompile(`(?m)^` + k + `=.*$`)
		if !re.MatchString(env) {
			t.Fatalf("deploy/.env.scale.example does not document %s", k)
		}
		env = re.ReplaceAllString(env, k+"="+v)
	}
	must(t, os.WriteFile(s.envFile, []byte(env), 0o600), "write the env file")
	for _, line := range strings.Split(env, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			s.env = append(s.env, line)
		}
	}

	t.Cleanup(func() {
		if t.Failed() {
			out, _ := s.run("logs", "--no-color", "--tail", "40")
			t.Logf("compose logs:\n%s", out)
		}
		if out, err := s.run("down", "--volumes", "--remove-orphans", "--timeout", "10"); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
	})
	if o.makeUp {
		// make writes this settings file (with fresh secrets, as on a fresh
		// clone); the environment's settings are this test's.
		scaleEnv := filepath.Join(t.TempDir(), "env.scale")
		runTranscript(t, "up-scale", transcriptRun{
			root: root,
			env: append(slices.Clone(s.env), "SCALE_PROJECT="+s.project, "SCALE_ENV="+scaleEnv, "SCALE_TLS="+s.tlsDir,
				"SCALE_REPLICAS="+strconv.Itoa(o.composer), "SCALE_OCR_REPLICAS="+strconv.Itoa(o.ocr)),
			project: [2]string{"agenturascale", s.project},
			subst: [][2]string{{"deploy/.env.scale", scaleEnv}, {"build/scale-tls", s.tlsDir},
				{"localhost:8443", strings.TrimPrefix(s.lbURL, "https://")}, {"localhost:8444", strings.TrimPrefix(s.ocrLBURL, "https://")},
				{"localhost:8080", strings.TrimPrefix(s.lbHTTPURL, "http://")}, {"localhost:7070", strings.TrimPrefix(s.s3URL, "http://")}},
		})
		trustCA(t, filepath.Join(s.tlsDir, "ca.pem"))
	} else {
		if out, err := s.run("up", "-d", "--scale", "composer="+strconv.Itoa(o.composer), "--scale", "ocr="+strconv.Itoa(o.ocr)); err != nil {
			t.Fatalf("compose up: %v\n%s", err, out)
		}
		s.waitHealthy(t)
	}
	s.findReplicas(t)
	return s
}

// scaleReplicas is how many composer replicas the tests run.
const scaleReplicas = 2

// replica is one composer container, reached at its address in the network.
type replica struct {
	id, url string
}

// findReplicas looks up the composer containers, in the order of their
// names, and sets aURL and bURL to the first two.
func (s *scaleDeployment) findReplicas(t *testing.T) {
	t.Helper()
	s.replicas = s.serviceReplicas(t, "composer", 8002, s.opts.composer)
	if len(s.replicas) >= 2 {
		s.aURL, s.bURL = s.replicas[0].url, s.replicas[1].url
	}
}

// serviceReplicas are the want containers of service, in the order of
// their names, each reached at its address in the network on port.
func (s *scaleDeployment) serviceReplicas(t *testing.T, service string, port, want int) []replica {
	t.Helper()
	out, err := s.run("ps", "-q", service)
	if err != nil {
		t.Fatalf("compose ps %s: %v\n%s", service, err, out)
	}
	var replicas []replica
	for _, id := range strings.Fields(out) {
		f := strings.Fields(run(t, nil, "docker", "inspect", "-f", "{{.Name}} {{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", id))
		if len(f) < 2 {
			t.Fatalf("container %s has no address in the network", id)
		}
		replicas = append(replicas, replica{id: f[0] + " " + id, url: "http://" + f[1] + ":" + strconv.Itoa(port)})
	}
	if len(replicas) != want {
		t.Fatalf("%d %s replicas run, want %d", len(replicas), service, want)
	}
	slices.SortFunc(replicas, func(a, b replica) int { return strings.Compare(a.id, b.id) })
	for i := range replicas {
		replicas[i].id = strings.Fields(replicas[i].id)[1]
	}
	return replicas
}

// stopReplica stops replica i (0 is A) as `docker stop` does: SIGTERM, then
// 10 s for requests in flight.
func (s *scaleDeployment) stopReplica(t *testing.T, i int) {
	t.Helper()
	run(t, nil, "docker", "stop", "--time", "10", s.replicas[i].id)
}

// startReplica starts a stopped replica again and waits for its health check.
func (s *scaleDeployment) startReplica(t *testing.T, i int) {
	t.Helper()
	run(t, nil, "docker", "start", s.replicas[i].id)
	s.waitHealthy(t)
}

// trustCA makes this process's default HTTP client, and the programs it
// starts (SSL_CERT_FILE), trust the CA in caFile besides nothing else: the
// balancer's certificate is the only one they meet here.
func trustCA(t *testing.T, caFile string) {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	must(t, err, "read the local CA")
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	tr := http.DefaultTransport.(*http.Transport)
	old := tr.TLSClientConfig
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	t.Cleanup(func() { tr.TLSClientConfig = old })
	t.Setenv("SSL_CERT_FILE", caFile)
}

// waitHealthy waits for the health checks with deploy/wait-healthy.sh, as
// `make up-scale` does; the script's Compose calls need the secrets set.
func (s *scaleDeployment) waitHealthy(t *testing.T) {
	t.Helper()
	env := append([]string{"COMPOSE_PROJECT_NAME=" + s.project}, s.env...)
	run(t, env, filepath.Join(s.root, "deploy", "wait-healthy.sh"), s.file, "120")
}

// setEnv changes one variable of the env file, for the next Compose command.
func (s *scaleDeployment) setEnv(t *testing.T, name, value string) {
	t.Helper()
	i := slices.IndexFunc(s.env, func(line string) bool { return strings.HasPrefix(line, name+"=") })
	if i < 0 {
		t.Fatalf("the env file has no %s", name)
	}
	s.env[i] = name + "=" + value
	must(t, os.WriteFile(s.envFile, []byte(strings.Join(s.env, "\n")+"\n"), 0o600), "rewrite the env file")
}

// via is url (a download URL under the shared public URL) sent to base instead:
// what a load balancer does when it picks that replica.
func (s *scaleDeployment) via(t *testing.T, url, base string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(url, s.publicURL+"/")
	if !ok {
		t.Fatalf("URL %s is not under the shared AGENT_PUBLIC_URL %s", redact(url), s.publicURL)
	}
	return base + "/" + rest
}

// TestComposeScale runs deploy/docker-compose.scale.yml: versitygw and two
// composer replicas (--scale composer=2) sharing its bucket and one signing
// key, each reached at its own address in the network. A PDF produced
// through replica A with the agentura CLI downloads through replica B with
// the same signed URL; a sequence of stateless MCP calls (mcp-go) alternates
// between A and B, each replica taking the other's URLs as inputs; with A
// stopped, B still serves what A made and the network alias still answers.
// B recreated with AGENT_S3_REDIRECT=true redirects to S3's public endpoint. The bucket's volume keeps the S3
// metadata in extended attributes, and no container runs as root.
func TestComposeScale(t *testing.T) {
	// Nothing embedded: every file the CLI saves came over HTTP from a replica. Up by the doc's
	// transcript of make up-scale, with its default of one OCR replica.
	s := startScaleWith(t, scaleOptions{embed: "0", project: runProject("scale"), composer: scaleReplicas, ocr: 1, makeUp: true})
	ids, err := s.run("ps", "-q")
	must(t, err, "compose ps")
	for _, id := range strings.Fields(ids) {
		name := strings.TrimSpace(run(t, nil, "docker", "inspect", "-f", "{{.Name}}", id))
		if uid := processUID(t, id); uid == "0" {
			t.Errorf("%s runs as root", name)
		}
		if ro := strings.TrimSpace(run(t, nil, "docker", "inspect", "-f", "{{.HostConfig.ReadonlyRootfs}}", id)); ro != "true" {
			t.Errorf("%s: the root file system is writable", name)
		}
	}

	// 1. The CLI calls B; the file it saves came through the shared public
	// URL, the balancer (nothing is embedded in this run). A bare stateless JSON-RPC POST (no initialize, no
	// session) to A makes a PDF whose URL downloads through B.
	cli := agenturaCLI(t, s.root)
	// Called on B directly, the CLI is told that A's origin (the public URL) is
	// trusted too; behind a balancer the two are one origin.
	cli.flags = []string{"--allow-host", strings.TrimPrefix(s.publicURL, "https://")}
	work := t.TempDir()
	var made cliResult
	cli.call(t, &made, s.bURL+"/mcp", "compose_document",
		`{"markdown": "# From B\n\nFetched through A", "format": "md", "filename": "from-b.md"}`, work)
	saved := made.saved(t, "from-b.md")
	if !filepath.IsAbs(saved) {
		saved = filepath.Join(work, saved)
	}
	fromB, err := os.ReadFile(saved)
	must(t, err, "read the file the CLI saved")
	if !strings.Contains(string(fromB), "Fetched through A") {
		t.Errorf("the CLI saved %q; want the Markdown B composed", fromB)
	}
	urlA := fileOf(t, statelessCall(t, s.aURL, "compose_document", map[string]any{
		"markdown": "# Scale report\n\nMade by replica A", "format": "pdf", "filename": "part-a.pdf",
	}), "part-a.pdf")
	partA := mcptest.Download(t, urlA) // through the public URL: the balancer
	if got := mcptest.Download(t, s.via(t, urlA, s.bURL)); !bytes.Equal(got, partA) {
		t.Errorf("replica B serves %d bytes for A's URL; A serves %d", len(got), len(partA))
	}
	// B verifies the token with the shared key; it does not serve anything it is asked for.
	if code := status(t, s.via(t, urlA, s.bURL)+"x"); code != http.StatusForbidden && code != http.StatusUnauthorized {
		t.Errorf("replica B answered %d to a tampered token; want 401 or 403", code)
	}

	// 2. Stateless MCP calls alternating A, B, A, B: each takes the other's URLs.
	a, b := connectMCP(t, s.aURL), connectMCP(t, s.bURL)
	urlB := fileOf(t, callTool(t, b, "compose_document", map[string]any{
		"markdown": "# Part two\n\nMade by replica B", "format": "pdf", "filename": "part-b.pdf",
	}), "part-b.pdf")
	merged := fileOf(t, callTool(t, a, "merge_pdfs", map[string]any{
		"sources": []any{urlA, urlB}, "filename": "merged-on-a.pdf",
	}), "merged-on-a.pdf")
	final := fileOf(t, callTool(t, b, "merge_pdfs", map[string]any{
		"sources": []any{merged, urlA}, "filename": "final-on-b.pdf",
	}), "final-on-b.pdf")
	text := pdfText(t, mcptest.Download(t, s.via(t, final, s.bURL)))
	for _, want := range []string{"Made by replica A", "Made by replica B"} {
		if !strings.Contains(text, want) {
			t.Errorf("the PDF merged on B from A's and B's outputs lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "Made by replica A"); n != 2 {
		t.Errorf("the final PDF holds A's page %d times; want 2 (merged-on-a, then part-a again)", n)
	}

	// 3. The replicas recreated with AGENT_S3_REDIRECT=true: B answers a
	// valid URL with a redirect to a presigned URL on S3_PUBLIC_ENDPOINT,
	// which the host follows to the same bytes.
	s.setEnv(t, "AGENT_S3_REDIRECT", "true")
	// Removed first, with their work volumes, which a recreation would leave behind.
	if out, err := s.run("rm", "-f", "-s", "-v", "composer"); err != nil {
		t.Fatalf("compose rm composer: %v\n%s", err, out)
	}
	if out, err := s.run("up", "-d", "--no-deps", "--scale", "composer="+strconv.Itoa(scaleReplicas), "composer"); err != nil {
		t.Fatalf("compose up composer with AGENT_S3_REDIRECT=true: %v\n%s", err, out)
	}
	s.waitHealthy(t)
	s.findReplicas(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.via(t, urlA, s.bURL), nil)
	resp, err := noFollow.Do(req)
	must(t, err, "GET A's URL through B")
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, s.s3URL+"/agentura/") {
		t.Errorf("B with AGENT_S3_REDIRECT=true answered %s, Location %q; want 302 to %s/agentura/...", resp.Status, redact(loc), s.s3URL)
	}
	if got := mcptest.Download(t, s.via(t, urlA, s.bURL)); !bytes.Equal(got, partA) {
		t.Errorf("following B's redirect gives %d bytes; A's file has %d", len(got), len(partA))
	}

	// 4. With A gone, B serves what A made: the files are in the bucket, not
	// on A. Inside the network the alias "composer" still answers (asked with
	// the s3 image's probe, the one HTTP client in these images).
	s3 := s.containerID(t, "s3")
	run(t, nil, "docker", "exec", s3, "/httpprobe", "http://composer:8002/readyz")
	s.stopReplica(t, 0)
	if got := mcptest.Download(t, s.via(t, urlA, s.bURL)); !bytes.Equal(got, partA) {
		t.Errorf("with A stopped, B serves %d bytes for A's URL; want %d", len(got), len(partA))
	}
	run(t, nil, "docker", "exec", s3, "/httpprobe", "http://composer:8002/readyz")

	// 5. The named volume holds versitygw's metadata in user extended attributes.
	checkXattrs(t, strings.TrimSpace(run(t, nil, "docker", "volume", "inspect", "-f", "{{.Mountpoint}}", s.project+"_s3-data")))
}

// producedURL is the signed URL of name in a result's "Tool produced:" line.
func producedURL(t *testing.T, text, name string) string {
	t.Helper()
	m := regexp.MustCompile(`Tool produced: ` + regexp.QuoteMeta(name) + ` \([^)]*\) (\S+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the result's text has no \"Tool produced: %s (...) URL\" line:\n%s", name, text)
	}
	return m[1]
}

// statelessCall POSTs one tools/call to base/mcp with no initialize and no
// session, as a stateless agent allows (curl would do the same), and returns
// the structured content; an error fails the test.
func statelessCall(t *testing.T, base, tool string, args map[string]any) map[string]any {
	t.Helper()
	raw := rpc(t, http.DefaultClient, base+"/mcp", "tools/call", map[string]any{"name": tool, "arguments": args})
	var out struct {
		IsError    bool           `json:"isError"`
		Structured map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.IsError {
		t.Fatalf("%s on %s without a session: %v; result: %s", tool, base, err, raw)
	}
	return out.Structured
}

// status is the status code of a GET of url.
func status(t *testing.T, url string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", redact(url), err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// pdfText is the text of a PDF by poppler's pdftotext.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	bin := requiretool.Command(t, "pdftotext", "apt-get install poppler-utils (to read the merged PDF)")
	cmd := exec.CommandContext(t.Context(), bin, "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := procgroup.Output(cmd)
	if err != nil {
		t.Fatalf("pdftotext of a %d-byte download: %v (not a PDF?)", len(pdf), err)
	}
	return string(out)
}

// checkXattrs finds the objects in the bucket folder of the volume at dir and
// checks that each carries versitygw's user.content-type attribute.
func checkXattrs(t *testing.T, dir string) {
	t.Helper()
	objects := 0
	err := filepath.WalkDir(filepath.Join(dir, "agentura", "outputs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		objects++
		buf := make([]byte, 4096)
		n, err := syscall.Listxattr(p, buf)
		if err != nil {
			t.Errorf("list the extended attributes of %s: %v", p, err)
			return nil
		}
		if names := strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00"); !slices.Contains(names, "user.content-type") {
			t.Errorf("%s carries %q; want user.content-type (does the volume's file system keep user xattrs?)", p, names)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk the bucket in the volume at %s: %v", dir, err)
	}
	if objects == 0 {
		t.Fatalf("the volume at %s holds no objects under agentura/outputs", dir)
	}
}

// randomHex is n random bytes, hex-encoded: a secret fit for an env file.
func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// deployment is the docker compose project of one test run, isolated from an
// operator's by its project name, its env file and (optionally) its ports.
type deployment struct {
	root, file, envFile, project string
	extra                        []string // further compose files (-f), after file
	ocrURL, composerURL          string   // public base URLs, as the host reaches the agents
	compose                      []string
}

// envPort reads a published port that deploy/e2e.sh picked or was given,
// such as E2E_OCR_PORT; unset (go test run by hand), it is a free port.
func envPort(t *testing.T, name string) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return freePort(t)
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 || p > 65535 {
		t.Fatalf("%s=%q is not a port number", name, v)
	}
	return p
}

// runProject is the base of this run's Compose project names: E2E_PROJECT,
// which deploy/e2e.sh sets (new each run unless given), or, for go test run
// by hand, agenturae2e- and this process's id. A test's project is it with
// the test's suffix ("" for the plain deployment, then "auth", "nginx", "trace",
// "scale", "tasks"); deploy/e2e.sh takes down exactly these.
func runProject(suffix string) string {
	base := os.Getenv("E2E_PROJECT")
	if base == "" {
		base = "agenturae2e-" + strconv.Itoa(os.Getpid())
	}
	return base + suffix
}

// composeCommand is Compose v2 (docker compose) when present, else v1 (docker-compose).
func composeCommand(t *testing.T) []string {
	t.Helper()
	if procgroup.Run(exec.Command("docker", "compose", "version")) == nil {
		return []string{"docker", "compose"}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	requiretool.Missing(t, "neither `docker compose` nor `docker-compose` is installed: run `make deps`")
	return nil
}

// makeUp brings a deployment up the way the docs show (transcriptDocs): its
// transcript of make target, run with the env file's settings in the
// environment (where Compose takes them from, over deploy/.env) and the
// make variable that names the project (vars, e.g. COMPOSE_PROJECT=...).
type makeUp struct {
	target         string
	defaultProject string      // the project the doc's output names (the make variable's default)
	vars           []string    // further environment: make variables, settings
	subst          [][2]string // further substitutions (transcriptRun.subst), before the ports'
	onLine         func(ctx context.Context, line string) error
}

// startDeploymentWith writes an env file from deploy/.env.example (so the
// example is proven complete and valid) with project, this run's ports and
// the variables vars, brings the project of deploy/docker-compose.yml and the
// compose files extra (paths under deploy/) up and waits for every health
// check; with up, it brings it up by the doc's transcript instead. The
// project is always taken down again, volumes included, when the test ends.
func startDeploymentWith(t *testing.T, project string, extra []string, vars map[string]string, up *makeUp) *deployment {
	t.Helper()
	requireDocker(t)
	root := repoRoot(t)
	ocrPort, composerPort := envPort(t, "E2E_OCR_PORT"), envPort(t, "E2E_COMPOSER_PORT")
	d := &deployment{
		root:        root,
		file:        filepath.Join(root, "deploy", "docker-compose.yml"),
		envFile:     filepath.Join(t.TempDir(), "e2e.env"),
		project:     project,
		ocrURL:      "http://localhost:" + strconv.Itoa(ocrPort),
		composerURL: "http://localhost:" + strconv.Itoa(composerPort),
		compose:     composeCommand(t),
	}
	example, err := os.ReadFile(filepath.Join(root, "deploy", ".env.example"))
	must(t, err, "read deploy/.env.example")
	set := map[string]string{
		"COMPOSE_PROJECT_NAME": d.project,
		"OCR_PORT":             strconv.Itoa(ocrPort),
		"COMPOSER_PORT":        strconv.Itoa(composerPort),
		"OCR_PUBLIC_URL":       d.ocrURL,
		"COMPOSER_PUBLIC_URL":  d.composerURL,
	}
	for _, f := range extra {
		d.extra = append(d.extra, filepath.Join(root, "deploy", f))
	}
	env := string(example)
	for k, v := range vars {
		// A variable the example documents is set on its own line (an env
		// file naming it twice leaves the winner to the Compose version).
		if re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(k) + `=.*$`); re.MatchString(env) {
			env = re.ReplaceAllLiteralString(env, k+"="+v)
			continue
		}
		env += "\n" + k + "=" + v + "\n"
	}
	for k, v := range set {
		re := regexp.MustCompile(`(?m)^` + k + `=.*$`)
		if !re.MatchString(env) {
			t.Fatalf("deploy/.env.example does not document %s", k)
		}
		env = re.ReplaceAllString(env, k+"="+v)
	}
	must(t, os.WriteFile(d.envFile, []byte(env), 0o600), "write the env file")

	t.Cleanup(func() {
		if t.Failed() {
			out, _ := d.run("logs", "--no-color", "--tail", "40")
			t.Logf("compose logs:\n%s", out)
		}
		if out, err := d.run("down", "--volumes", "--remove-orphans", "--timeout", "10"); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
	})
	if up != nil {
		var settings []string
		for _, l := range strings.Split(env, "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				settings = append(settings, l)
			}
		}
		runTranscript(t, up.target, transcriptRun{
			root: root,
			env:  append(settings, up.vars...),
			subst: append(slices.Clone(up.subst),
				[2]string{"localhost:8001", "localhost:" + strconv.Itoa(ocrPort)}, [2]string{"localhost:8002", "localhost:" + strconv.Itoa(composerPort)}),
			project: [2]string{up.defaultProject, d.project},
			onLine:  up.onLine,
		})
		return d
	}
	if out, err := d.run("up", "-d"); err != nil {
		t.Fatalf("compose up: %v\n%s", err, out)
	}
	d.waitHealthy(t)
	return d
}

// run runs one Compose command on the project.
func (d *deployment) run(args ...string) (string, error) {
	full := append(append([]string{}, d.compose[1:]...), "-p", d.project, "-f", d.file)
	for _, f := range d.extra {
		full = append(full, "-f", f)
	}
	full = append(append(full, "--env-file", d.envFile), args...)
	cmd := exec.Command(d.compose[0], full...)
	cmd.Dir = filepath.Dir(d.file)
	out, err := procgroup.CombinedOutput(cmd)
	return string(out), err
}

// waitHealthy waits for the health checks with deploy/wait-healthy.sh, as `make up` does,
// naming every compose file of the project (with only the first, Compose lists the agents alone).
func (d *deployment) waitHealthy(t *testing.T) {
	t.Helper()
	files := strings.Join(append([]string{d.file}, d.extra...), ":")
	run(t, []string{"COMPOSE_PROJECT_NAME=" + d.project}, filepath.Join(d.root, "deploy", "wait-healthy.sh"), files, "120")
}

// containerID is the container of a compose service.
func (d *deployment) containerID(t *testing.T, service string) string {
	t.Helper()
	out, err := d.run("ps", "-q", service)
	id := strings.TrimSpace(out)
	if err != nil || id == "" {
		t.Fatalf("no container for %s: %v %s", service, err, out)
	}
	return id
}

// TestCompose runs the deployment an operator runs: both agents from
// deploy/docker-compose.yml, brought up by the transcript of make up in
// docs/deployment.md (make up, a PDF composed and read back with the CLI),
// driven from the host. With the agentura CLI it
// reads a generated scan with the OCR agent and composes a PPTX report of the
// recognised text plus the scan with the composer agent, which the CLI
// downloads through its signed URL. With an independent MCP client (mcp-go)
// it hands a URL made by the OCR agent to the composer inside the compose
// network and one made by the composer to the OCR agent, downloads the
// report by its URL, restarts the composer and
// downloads the same URL again. No agent may run as root or on a writable
// root file system.
func TestCompose(t *testing.T) {
	d := startDeploymentWith(t, runProject(""), nil, nil, &makeUp{target: "up", defaultProject: "agentura",
		vars: []string{"COMPOSE_PROJECT=" + runProject("")}})
	serving := time.Now().UTC().Format(time.RFC3339Nano) // past the start-up's notices (the generated signing key's warning)
	scan := scanPNG(t)

	for _, svc := range []string{"ocr-agent", "composer-agent"} {
		id := d.containerID(t, svc)
		if uid := processUID(t, id); uid == "0" {
			t.Errorf("%s runs as root", svc)
		} else {
			t.Logf("%s runs as uid %s", svc, uid)
		}
		hc := strings.Fields(run(t, nil, "docker", "inspect", "-f",
			"{{.HostConfig.ReadonlyRootfs}} {{.HostConfig.RestartPolicy.Name}} {{.HostConfig.Memory}} {{.HostConfig.NanoCpus}}", id))
		if len(hc) != 4 || hc[0] != "true" || hc[1] != "unless-stopped" || hc[2] == "0" || hc[3] == "0" {
			t.Errorf("%s: want a read-only root, restart unless-stopped, memory and CPU limits; inspect says %v", svc, hc)
		}
	}

	// 1. The operator's path: the agentura CLI, files attached by name.
	cli := agenturaCLI(t, d.root)
	work := t.TempDir()
	scanPath := filepath.Join(work, "scan.png")
	must(t, os.WriteFile(scanPath, scan, 0o644), "write the scan")
	var ocrOut cliResult
	cli.call(t, &ocrOut, d.ocrURL+"/mcp", "ocr_document", `{"source": "scan.png"}`, work, scanPath)
	text, _ := ocrOut.Structured["text"].(string)
	for _, want := range []string{"4711", "deploy", "1234"} {
		if !strings.Contains(strings.ToLower(text), want) {
			t.Errorf("recognised text lacks %q:\n%s", want, text)
		}
	}
	args, _ := json.Marshal(map[string]any{
		"markdown": "# Scan report\n\n" + text + "\n\n![The scan](scan.png)\n",
		"format":   "pptx",
		"title":    "Scan report",
		"filename": "report.pptx",
		"embeds":   []any{map[string]any{"name": "scan.png", "description": "the scan"}},
	})
	var reportOut cliResult
	cli.call(t, &reportOut, d.composerURL+"/mcp", "compose_document", string(args), work, scanPath)
	saved := reportOut.saved(t, "report.pptx")
	if !filepath.IsAbs(saved) {
		saved = filepath.Join(work, saved)
	}
	report, err := os.ReadFile(saved)
	must(t, err, "read the report the CLI saved")
	checkReport(t, report)

	// 2. A URL made by the OCR agent, handed to the composer. Inside the
	// network http://localhost:8001 is the composer itself; AGENT_PEER_URLS
	// sends the fetch to ocr-agent:8001.
	ocr, composer := connectMCP(t, d.ocrURL), connectMCP(t, d.composerURL)
	staged := upload(t, d.ocrURL, "scan.png", scan)
	if !strings.HasPrefix(staged, d.ocrURL+"/") {
		t.Fatalf("the OCR agent's upload URL %s is not under its public URL %s", redact(staged), d.ocrURL)
	}
	if got := ocrText(t, ocr, staged); !strings.Contains(got, "4711") {
		t.Errorf("OCR of its own staged URL lacks 4711:\n%s", got)
	}
	out := callTool(t, composer, "compose_document", map[string]any{
		"markdown": "# Scan report\n\n" + text + "\n\n![The scan](scan.png)\n",
		"format":   "pptx",
		"filename": "handoff.pptx",
		"embeds":   []any{map[string]any{"name": "scan.png", "content": staged}},
	})
	reportURL := fileOf(t, out, "handoff.pptx")
	if !strings.HasPrefix(reportURL, d.composerURL+"/files/") {
		t.Errorf("report URL %s is not under the composer's AGENT_PUBLIC_URL %s", redact(reportURL), d.composerURL)
	}
	handoff := mcptest.Download(t, reportURL)
	checkReport(t, handoff)
	if !zipHolds(t, handoff, scan) {
		t.Errorf("the report composed from the peer's URL does not hold the scan's bytes")
	}

	// The peer is reached only through its public URLs: its internal
	// address named directly meets the SSRF guard.
	direct := strings.Replace(staged, d.ocrURL, "http://ocr-agent:8001", 1)
	if msg := toolError(t, composer, "compose_document", map[string]any{
		"markdown": "![The scan](scan.png)",
		"format":   "md",
		"embeds":   []any{map[string]any{"name": "scan.png", "content": direct}},
	}); !strings.Contains(msg, "refused to fetch") {
		t.Errorf("the OCR agent's internal URL given directly: %s; want an SSRF refusal", msg)
	}

	// The other way: the OCR agent reads a PDF the composer made, fetched
	// from composer-agent:8002 for http://localhost:8002 (and rasterised by
	// pdftoppm in the OCR image).
	out = callTool(t, composer, "compose_document", map[string]any{
		"markdown": "# Invoice 4711\n\nTotal due 1234 EUR\n",
		"format":   "pdf",
		"filename": "invoice.pdf",
	})
	if got := ocrText(t, ocr, fileOf(t, out, "invoice.pdf")); !strings.Contains(got, "4711") {
		t.Errorf("OCR of the composer's PDF lacks 4711:\n%s", got)
	}

	// The current MCP revision, 2026-07-28, on the same deployment; its long
	// OCR reads a many-page PDF the composer made.
	var long strings.Builder
	for i := range 600 {
		fmt.Fprintf(&long, "Line %d of the long report, recognised page after page.\n\n", i+1)
	}
	out = callTool(t, composer, "compose_document", map[string]any{"markdown": long.String(), "format": "pdf", "filename": "long.pdf"})
	currentRevision(t, d, scan, staged, fileOf(t, out, "long.pdf"))

	// Quiet logs: over every call above (the CLI, stateful sessions of
	// 2025-11-25, 2026-07-28), neither agent logged a warning or an error.
	for _, svc := range []string{"ocr-agent", "composer-agent"} {
		if w := mcptest.Warnings(run(t, nil, "docker", "logs", "--since", serving, d.containerID(t, svc))); len(w) > 0 {
			t.Errorf("%s logged warnings over the run:\n%s", svc, strings.Join(w, "\n"))
		}
	}

	// 3. Restart: the key and the files are in the volume, the URL still works.
	if out, err := d.run("restart", "composer-agent"); err != nil {
		t.Fatalf("compose restart: %v\n%s", err, out)
	}
	d.waitHealthy(t)
	again := mcptest.Download(t, reportURL)
	if sha256.Sum256(again) != sha256.Sum256(handoff) {
		t.Errorf("after a restart the same URL serves different bytes (%d, before %d)", len(again), len(handoff))
	}
}

// ocrText runs ocr_document on source and returns the recognised text.
func ocrText(t *testing.T, c *client.Client, source string) string {
	t.Helper()
	out := callTool(t, c, "ocr_document", map[string]any{"source": source})
	text, _ := out["text"].(string)
	if strings.TrimSpace(text) == "" {
		t.Fatalf("ocr_document returned no text: %v", out)
	}
	return text
}

// checkReport checks that a PPTX holds the recognised text on a slide and the
// scan as a picture.
func checkReport(t *testing.T, pptx []byte) {
	t.Helper()
	entries := zipEntries(t, pptx)
	var slides, media []string
	var slideText strings.Builder
	for name, data := range entries {
		switch {
		case strings.HasPrefix(name, "ppt/slides/slide") && strings.HasSuffix(name, ".xml"):
			slides = append(slides, name)
			slideText.Write(data)
		case strings.HasPrefix(name, "ppt/media/"):
			media = append(media, name)
		}
	}
	if len(slides) == 0 || entries["[Content_Types].xml"] == nil {
		t.Fatalf("not a PPTX: no slides or content types among %d entries", len(entries))
	}
	if !strings.Contains(slideText.String(), "4711") {
		t.Errorf("no slide holds the recognised invoice number 4711")
	}
	if len(media) == 0 {
		t.Errorf("the report holds no picture (ppt/media is empty)")
	}
}

//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// imageCase is one agent image: its Dockerfile in the build context, its
// port, and one call whose result the test checks.
type imageCase struct {
	dockerfile string
	port       string
	call       func(t *testing.T, public string)
}

// TestImages builds each agent's image from its Dockerfile with
// testcontainers-go (core module, FromDockerfile), starts it read-only and
// without capabilities as the compose file does, waits for its Docker health
// check (the binary's --healthcheck; scratch has no curl) and /readyz, checks
// it runs as the numeric non-root user, and makes one call.
func TestImages(t *testing.T) {
	scan := scanPNG(t)
	cases := map[string]imageCase{
		"composer": {"Dockerfile.composer", "8002", func(t *testing.T, public string) {
			out := callTool(t, connectMCP(t, public), "compose_document", map[string]any{
				"markdown": "# Image check\n\nComposed inside the scratch image.",
				"format":   "pdf",
				"filename": "check.pdf",
			})
			url := fileOf(t, out, "check.pdf")
			if !strings.HasPrefix(url, public+"/files/") {
				t.Errorf("download URL %s is not under AGENT_PUBLIC_URL %s", redact(url), public)
			}
			if pdf := mcptest.Download(t, url); !bytes.HasPrefix(pdf, []byte("%PDF-")) {
				t.Errorf("downloaded %d bytes that are not a PDF: %q", len(pdf), fmt.Sprintf("%.20s", pdf))
			}
		}},
		"ocr": {"Dockerfile.ocr", "8001", func(t *testing.T, public string) {
			if text := ocrText(t, connectMCP(t, public), dataURI("image/png", "scan.png", scan)); !strings.Contains(text, "4711") {
				t.Errorf("tesseract in the image read %q; want the invoice number 4711", text)
			}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { testImage(t, tc) })
	}
}

func testImage(t *testing.T, tc imageCase) {
	requireDocker(t)
	buildCtx := filepath.Join(repoRoot(t), "build", "images")
	if _, err := os.Stat(filepath.Join(buildCtx, tc.dockerfile)); err != nil {
		t.Fatalf("no image build context at %s (%v): run `make image-context` (or `make e2e`) first", buildCtx, err)
	}
	hostPort := freePort(t)
	public := "http://127.0.0.1:" + strconv.Itoa(hostPort)
	ctrPort := tc.port + "/tcp"
	ctr, err := testcontainers.Run(t.Context(), "",
		testcontainers.WithDockerfile(testcontainers.FromDockerfile{
			Context:    buildCtx,
			Dockerfile: tc.dockerfile,
		}),
		testcontainers.WithExposedPorts(ctrPort),
		testcontainers.WithEnv(map[string]string{"AGENT_PUBLIC_URL": public}),
		testcontainers.WithTmpfs(map[string]string{"/tmp": "size=64m,mode=1777"}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.ReadonlyRootfs = true
			hc.CapDrop = []string{"ALL"}
			hc.PortBindings = network.PortMap{network.MustParsePort(ctrPort): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(hostPort)}}}
		}),
		testcontainers.WithWaitStrategyAndDeadline(90*time.Second,
			wait.ForHealthCheck(),
			wait.ForHTTP("/readyz").WithPort(ctrPort).WithStatusCodeMatcher(func(s int) bool { return s == http.StatusOK }),
		),
	)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("start the image of %s: %v", tc.dockerfile, err)
	}
	inspect, err := ctr.Inspect(t.Context())
	must(t, err, "inspect")
	if inspect.Config.User != "65532:65532" {
		t.Errorf("image user = %q, want 65532:65532", inspect.Config.User)
	}
	if uid := processUID(t, ctr.GetContainerID()); uid == "0" {
		t.Errorf("the agent runs as root")
	}
	tc.call(t, public)
}

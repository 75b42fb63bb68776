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
)

// TestComposerImage builds the composer image from deploy/Dockerfile.composer
// with testcontainers-go (core module, FromDockerfile), starts it read-only
// as the compose file does, waits for its Docker health check (the binary's
// --healthcheck on scratch), and makes one call whose file is downloaded from
// the host through the signed URL.
func TestComposerImage(t *testing.T) {
	requireDocker(t)
	buildCtx := filepath.Join(repoRoot(t), "build", "images")
	if _, err := os.Stat(filepath.Join(buildCtx, "Dockerfile.composer")); err != nil {
		t.Fatalf("no image build context at %s (%v): run `make image-context` (or `make e2e`) first", buildCtx, err)
	}
	port := freePort(t)
	public := "http://127.0.0.1:" + strconv.Itoa(port)
	ctr, err := testcontainers.Run(t.Context(), "",
		testcontainers.WithDockerfile(testcontainers.FromDockerfile{
			Context:    buildCtx,
			Dockerfile: "Dockerfile.composer",
		}),
		testcontainers.WithExposedPorts("8002/tcp"),
		testcontainers.WithEnv(map[string]string{"AGENT_PUBLIC_URL": public, "AGENT_LOG_LEVEL": "debug"}),
		testcontainers.WithTmpfs(map[string]string{"/tmp": "size=64m,mode=1777"}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.ReadonlyRootfs = true
			hc.CapDrop = []string{"ALL"}
			hc.PortBindings = network.PortMap{network.MustParsePort("8002/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(port)}}}
		}),
		testcontainers.WithWaitStrategyAndDeadline(90*time.Second,
			wait.ForHealthCheck(),
			wait.ForHTTP("/readyz").WithPort("8002/tcp").WithStatusCodeMatcher(func(s int) bool { return s == http.StatusOK }),
		),
	)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("start the composer image: %v", err)
	}

	// The image runs as the numeric non-root user it declares.
	inspect, err := ctr.Inspect(t.Context())
	must(t, err, "inspect")
	if inspect.Config.User != "65532:65532" {
		t.Errorf("image user = %q, want 65532:65532", inspect.Config.User)
	}
	if uid := processUID(t, ctr.GetContainerID()); uid == "0" {
		t.Errorf("the agent runs as root")
	}

	c := connectMCP(t, public)
	out := callTool(t, c, "compose_document", map[string]any{
		"markdown": "# Image check\n\nComposed inside the scratch image.",
		"format":   "pdf",
		"filename": "check.pdf",
	})
	url := fileOf(t, out, "check.pdf")
	if !strings.HasPrefix(url, public+"/files/") {
		t.Errorf("download URL %s is not under AGENT_PUBLIC_URL %s", redact(url), public)
	}
	pdf := download(t, url)
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Errorf("downloaded %d bytes that are not a PDF: %q", len(pdf), fmt.Sprintf("%.20s", pdf))
	}
}

package s3store_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// TestDiskOnlyLinksNoMinio: minio-go comes only with this package. The
// framework, the file store and an agent that does not import s3store do
// not link it; the agent binaries that import it do.
func TestDiskOnlyLinksNoMinio(t *testing.T) {
	const minio = "github.com/minio/minio-go/v7"
	for pkg, want := range map[string]bool{
		"github.com/agentura/agentura/fileserve":             false,
		"github.com/agentura/agentura/agentcore":             false,
		"github.com/agentura/agentura/examples/fileagent":    false,
		"github.com/agentura/agentura/agents/composer":       false,
		"github.com/agentura/agentura/cmd/composer-agent":    true,
		"github.com/agentura/agentura/fileserve/s3store":     true,
		"github.com/agentura/agentura/cmd/ocr-agent":         true,
		"github.com/agentura/agentura/internal/lib/filehttp": false,
		"github.com/agentura/agentura/cleanup":               false,
		"github.com/agentura/agentura/fileserve/storetest":   false,
	} {
		out, err := procgroup.Output(exec.Command("go", "list", "-deps", pkg))
		if err != nil {
			t.Fatalf("go list -deps %s: %v (the go command must be on PATH)", pkg, err)
		}
		if got := strings.Contains(string(out), minio+"\n"); got != want {
			t.Errorf("%s links %s: %v, want %v", pkg, minio, got, want)
		}
	}
}

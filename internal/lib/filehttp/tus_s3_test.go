package filehttp

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/agentura/agentura/fileserve"
	_ "github.com/agentura/agentura/fileserve/s3store"
	"github.com/agentura/agentura/fileserve/storetest"
	"github.com/agentura/agentura/internal/testkit/s3test"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transferclient"
)

// On S3 the partial upload stays on local disk and the finished file is
// copied into the bucket (Store.Adopt): the File-Url serves the same bytes
// from S3, and nothing is left on disk.
func TestTusOnS3(t *testing.T) {
	s3 := s3test.Start(t)
	st, err := fileserve.OpenStore(context.Background(), s3.StorageURL(s3.NewBucket(t)), s3.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	env := newTusEnv(t, nil, func(c *Config) { c.Store = st })
	content := storetest.Pattern(3_000_000)
	client := &transferclient.Tus{Client: &http.Client{Transport: ownerTransport("alice")}, ChunkBytes: 1 << 20}
	fileURL, err := client.Send(bg, env.url+transfer.TusPath, "on-s3.bin", bytes.NewReader(content), int64(len(content)))
	if err != nil {
		t.Fatal(err)
	}
	resp, got := do(t, "GET", fileURL, nil, nil)
	if resp.StatusCode != 200 || !bytes.Equal(got, content) {
		t.Fatalf("GET File-Url from S3: %s, %d bytes", resp.Status, len(got))
	}
	obj, m, own, err := env.srv.OpenURL(bg, fileURL, "alice")
	if err != nil || !own || m.Area != fileserve.Staging {
		t.Fatalf("staged on S3: %+v %v %v", m, own, err)
	}
	obj.Close()
	if left, _ := filepath.Glob(filepath.Join(env.dir, "*.part")); len(left) > 0 {
		t.Errorf("the finished upload left %v on disk", left)
	}
	if files, _, _ := env.tus.Expire(bg, m.Created.Add(-1)); files != 0 {
		t.Errorf("a finished upload counted as unfinished")
	}
}

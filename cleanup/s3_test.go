package cleanup_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentura/agentura/cleanup"
	"github.com/agentura/agentura/fileserve"
	_ "github.com/agentura/agentura/fileserve/s3store"
	"github.com/agentura/agentura/internal/testkit/s3test"
	"github.com/minio/minio-go/v7"
)

// TestTwoReplicasSweepOneBucket: the sweepers of two replicas sharing an S3
// bucket run at the same moment; expired files go, young ones stay, neither
// reports an error, and nothing of the expired files is left in the bucket.
func TestTwoReplicasSweepOneBucket(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	var stores []fileserve.Store
	for range 2 {
		st, err := fileserve.OpenStore(context.Background(), srv.StorageURL(bucket), srv.LookupEnv)
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st)
	}
	ctx := context.Background()
	var expired, kept []fileserve.Meta
	for i := range 8 {
		area := fileserve.Outputs
		if i%4 == 3 {
			area = fileserve.Staging
		}
		m, err := stores[i%2].Put(ctx, fileserve.NewFile{Area: area, Owner: "o", Name: "f.txt"}, bytes.NewReader([]byte("content")))
		if err != nil {
			t.Fatal(err)
		}
		if area == fileserve.Outputs {
			expired = append(expired, m)
		} else {
			kept = append(kept, m)
		}
	}
	// An hour from now, outputs (TTL 30m) have expired, staged files (TTL 2h) not.
	later := time.Now().Add(time.Hour)
	var wg sync.WaitGroup
	stats := make([]cleanup.Stats, 2)
	errs := make([]error, 2)
	for i, st := range stores {
		sw, err := cleanup.New(cleanup.Config{
			Store: st,
			Rules: []cleanup.Rule{{Area: fileserve.Outputs, TTL: 30 * time.Minute}, {Area: fileserve.Staging, TTL: 2 * time.Hour}},
			Now:   func() time.Time { return later },
		})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { stats[i], errs[i] = sw.Sweep(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent sweeps: %v", err)
	}
	if n := stats[0].Files + stats[1].Files; n < len(expired) {
		t.Errorf("the two sweeps deleted %d files together, want at least %d", n, len(expired))
	}
	for _, m := range expired {
		if _, err := stores[1].Stat(ctx, m.Area, m.Owner, m.ID); !errors.Is(err, fileserve.ErrNotFound) {
			t.Errorf("expired file %s: Stat = %v, want ErrNotFound", m.ID, err)
		}
	}
	for _, m := range kept {
		if _, err := stores[0].Stat(ctx, m.Area, m.Owner, m.ID); err != nil {
			t.Errorf("young staged file %s was swept: %v", m.ID, err)
		}
	}
	for obj := range srv.Client().ListObjectsIter(ctx, bucket, minio.ListObjectsOptions{Prefix: "outputs/", Recursive: true}) {
		t.Errorf("the bucket still holds %s (%v)", obj.Key, obj.Err)
	}
	n := 0
	for obj := range srv.Client().ListObjectsIter(ctx, bucket, minio.ListObjectsOptions{Prefix: "staging/", Recursive: true}) {
		if strings.HasSuffix(obj.Key, "/data") {
			n++
		}
	}
	if n != len(kept) {
		t.Errorf("staging holds %d files, want %d", n, len(kept))
	}
}

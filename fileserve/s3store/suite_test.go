package s3store_test

import (
	"bytes"
	"context"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/s3store"
	"github.com/agentura/agentura/fileserve/storetest"
	"github.com/agentura/agentura/internal/testkit/s3test"
	"github.com/minio/minio-go/v7"
)

// TestS3StoreSuite runs the same suite on a real S3 server (versitygw).
func TestS3StoreSuite(t *testing.T) {
	srv := s3test.Start(t)
	var mu sync.Mutex
	configs := map[fileserve.Store]s3store.Config{}
	open := func(t *testing.T, cfg s3store.Config) fileserve.Store {
		st, err := s3store.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		configs[st] = cfg
		mu.Unlock()
		return st
	}
	configOf := func(st fileserve.Store) s3store.Config {
		mu.Lock()
		defer mu.Unlock()
		return configs[st]
	}
	cli := srv.Client()
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) fileserve.Store {
			cfg, err := s3store.ParseURL(srv.StorageURL(srv.NewBucket(t)) + "&part_size=5242880")
			if err != nil {
				t.Fatal(err)
			}
			cfg.AccessKey, cfg.SecretKey = srv.AccessKey, srv.SecretKey
			return open(t, cfg)
		},
		Another: func(t *testing.T, st fileserve.Store) fileserve.Store { return open(t, configOf(st)) },
		Abandon: func(t *testing.T, st fileserve.Store, area fileserve.Area) {
			bucket := configOf(st).Bucket
			dir := string(area) + "/" + fileserve.OwnerKey("o") + "/"
			if _, err := cli.PutObject(context.Background(), bucket, dir+fileserve.NewID()+"/data", bytes.NewReader([]byte("half")), 4, minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			core := minio.Core{Client: cli}
			if _, err := core.NewMultipartUpload(context.Background(), bucket, dir+fileserve.NewID()+"/data", minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		Remains: func(t *testing.T, st fileserve.Store) int {
			bucket := configOf(st).Bucket
			ctx := context.Background()
			data, meta := map[string]bool{}, map[string]bool{}
			var indexed []string // ids with an expiry index entry
			n := 0
			for obj := range cli.ListObjectsIter(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
				if obj.Err != nil {
					t.Fatal(obj.Err)
				}
				switch {
				case strings.HasPrefix(obj.Key, "index/"):
					indexed = append(indexed, obj.Key[strings.LastIndex(obj.Key, ".")+1:])
				case strings.HasSuffix(obj.Key, "/data"):
					data[strings.TrimSuffix(obj.Key, "data")] = true
				case strings.HasSuffix(obj.Key, "/meta.json"):
					meta[strings.TrimSuffix(obj.Key, "meta.json")] = true
				default:
					n++ // probes, strays
				}
			}
			for dir := range data {
				if !meta[dir] {
					n++
				}
			}
			for dir := range meta {
				if !data[dir] {
					n++ // metadata without content: a file that cannot be read
				}
			}
			ids := map[string]bool{}
			for dir := range meta {
				ids[path.Base(dir)] = true
			}
			for _, id := range indexed {
				if !ids[id] {
					n++ // an index entry of no file
				}
			}
			for up := range cli.ListIncompleteUploads(ctx, bucket, "", true) {
				if up.Err != nil {
					t.Fatal(up.Err)
				}
				n++
			}
			return n
		},
	})
}

// TestS3StoreNotReady: a missing bucket or an unreachable server makes Ready
// (and so /readyz) fail, saying what is wrong.
func TestS3StoreNotReady(t *testing.T) {
	srv := s3test.Start(t)
	for url, hint := range map[string]string{
		srv.StorageURL("no-such-bucket"):                    "does not exist; create it first",
		"s3://b?endpoint=127.0.0.1:1&secure=false&region=x": "not writable",
	} {
		st, err := fileserve.OpenStore(context.Background(), url, srv.LookupEnv)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = st.Ready(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), hint) {
			t.Errorf("%s: Ready = %v, want an error saying %q", url, err, hint)
		}
	}
}

// TestRecordsComeAndGoInOneFolder writes and deletes records of one kind
// and owner from four writers at once, as replicas do with their output
// journals: versitygw removes a folder its last object left and, now and
// then, answers a PUT into it 409 ExistingObjectIsDirectory while it does
// (about one PUT in a hundred here). Every write must still succeed.
func TestRecordsComeAndGoInOneFolder(t *testing.T) {
	srv := s3test.Start(t)
	cfg, err := s3store.ParseURL(srv.StorageURL(srv.NewBucket(t)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.AccessKey, cfg.SecretKey = srv.AccessKey, srv.SecretKey
	st, err := s3store.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const writers, rounds = 4, 250
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for range writers {
		wg.Go(func() {
			for range rounds {
				name := fileserve.NewID()
				if err := st.PutRecord(ctx, "pending-outputs", "*", name, []byte(`{"entries":[]}`)); err != nil {
					errs <- err
					continue
				}
				if err := st.DeleteRecord(ctx, "pending-outputs", "*", name); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 3 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Errorf("%d of %d record writes and deletes failed", n, 2*writers*rounds)
	}
}

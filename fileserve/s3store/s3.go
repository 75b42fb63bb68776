//go:build unix

// Package s3store is the fileserve.Store on S3-compatible object storage
// (AWS S3, MinIO, Ceph, versitygw), for agents that run as several replicas
// sharing one bucket. Importing it registers the s3:// scheme with
// fileserve.OpenStore:
//
//	import _ "github.com/agentura/agentura/fileserve/s3store"
//
// A program that does not import it does not link minio-go. Its stores are
// fileserve.Presigners: downloads may be redirected to presigned URLs
// (AGENT_S3_REDIRECT).
package s3store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Defaults of Config.
const (
	// DefaultPartSize is the part size of multipart uploads: the memory one
	// upload of unknown length holds at a time.
	DefaultPartSize = 8 << 20
	// minPartSize is the smallest part S3 accepts (except the last).
	minPartSize = 5 << 20
	// singlePutMax is how much of a new file Put reads ahead: content that
	// ends within it goes up in one PUT instead of a multipart upload.
	singlePutMax = 1 << 20
)

// Config says where a Store keeps its files. ParseURL fills it from an
// s3:// URL; the credentials come from the AWS_* environment.
type Config struct {
	// Bucket holds the files. It must exist. Required.
	Bucket string
	// Prefix is put before every key, so several agents can share a bucket:
	// "composer/" keeps keys under composer/. Empty or ending in "/".
	Prefix string
	// Endpoint is the host[:port] of the S3 API; empty means AWS S3
	// (s3.amazonaws.com).
	Endpoint string
	// Insecure talks plain HTTP instead of HTTPS.
	Insecure bool
	// Region of the bucket; empty means us-east-1.
	Region string
	// PathStyle addresses the bucket in the path (http://host/bucket/key),
	// as MinIO, versitygw and Ceph usually need, instead of in the host name
	// (http://bucket.host/key).
	PathStyle bool
	// AccessKey, SecretKey and SessionToken are the credentials
	// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).
	AccessKey, SecretKey, SessionToken string
	// PublicEndpoint is the host[:port] that clients following a redirect
	// reach the S3 API at, when it differs from Endpoint (a name inside a
	// container network); empty means Endpoint. Presigning does not contact
	// it.
	PublicEndpoint string
	// PartSize is the part size of multipart uploads, at least 5 MiB;
	// 0 means DefaultPartSize.
	PartSize uint64
	// Transport carries the requests; nil means a default transport.
	Transport http.RoundTripper
}

// Store is the fileserve.Store on an S3-compatible object store (AWS S3, MinIO,
// Ceph, versitygw, ...), for agents that run as several replicas.
//
// Its keys are <prefix><area>/<ownerkey>/<id>/data and .../meta.json, with
// ownerkey and id as in fileserve.DiskStore. The content is uploaded first (one PUT,
// or a multipart upload of PartSize parts for content longer than 1 MiB,
// so no file is ever held whole in memory), then its metadata: an S3 PUT is
// atomic, and a file exists for Stat, Open and Walk only once its metadata
// does, so it is never seen incomplete. Delete removes the metadata first,
// then the content. Content left without metadata by a crash, and
// multipart uploads never completed, are removed by Prune once old.
//
// An Object opened from a Store reads with ranged GETs: one request from
// the first read (or each seek) on. Once reading has begun it reads to its
// end even if the file is deleted meanwhile, as S3 servers finish a GET in
// progress; a file deleted between Open and the first read fails the read.
//
// A Store is safe for concurrent use, also by several processes sharing
// the bucket.
type Store struct {
	client   *minio.Client
	core     minio.Core
	presign  *minio.Client // client of PublicEndpoint; never contacted
	bucket   string
	prefix   string
	partSize uint64
	// inflight holds the ids of uploads in progress in this process, which
	// Prune leaves alone whatever their age.
	inflight sync.Map
	// heads recycles Put's read-ahead buffers (*[]byte of singlePutMax).
	heads sync.Pool
}

var (
	_ fileserve.Store     = (*Store)(nil)
	_ fileserve.Presigner = (*Store)(nil)
)

// New returns a store on the bucket cfg names. It does not contact the
// server; Ready does.
func New(cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3store: S3 storage needs a bucket: s3://<bucket>?endpoint=host:port")
	}
	if cfg.Prefix != "" && !strings.HasSuffix(cfg.Prefix, "/") {
		cfg.Prefix += "/"
	}
	cfg.PartSize = cmp.Or(cfg.PartSize, DefaultPartSize)
	if cfg.PartSize < minPartSize {
		return nil, fmt.Errorf("s3store: S3 part size %d is below the 5 MiB S3 requires", cfg.PartSize)
	}
	cfg.Endpoint = cmp.Or(cfg.Endpoint, "s3.amazonaws.com")
	cfg.Region = cmp.Or(cfg.Region, "us-east-1")
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, errors.New("s3store: S3 storage needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	newClient := func(endpoint string) (*minio.Client, error) {
		lookup := minio.BucketLookupDNS
		if cfg.PathStyle {
			lookup = minio.BucketLookupPath
		}
		c, err := minio.New(endpoint, &minio.Options{
			Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
			Secure:       !cfg.Insecure,
			Region:       cfg.Region,
			BucketLookup: lookup,
			Transport:    cfg.Transport,
		})
		if err != nil {
			return nil, fmt.Errorf("s3store: S3 endpoint %q: %w (give host:port, such as s3.example.com or 127.0.0.1:7070)", endpoint, err)
		}
		return c, nil
	}
	client, err := newClient(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	presign := client
	if cfg.PublicEndpoint != "" && cfg.PublicEndpoint != cfg.Endpoint {
		if presign, err = newClient(cfg.PublicEndpoint); err != nil {
			return nil, err
		}
	}
	return &Store{
		client:   client,
		core:     minio.Core{Client: client},
		presign:  presign,
		bucket:   cfg.Bucket,
		prefix:   cfg.Prefix,
		partSize: cfg.PartSize,
	}, nil
}

// Put streams r into a new file. Content that ends within 1 MiB goes up in
// one PUT; longer content in a multipart upload, one part in memory at a
// time. Over f.MaxBytes, or when r fails or ctx ends, the upload is aborted
// and nothing is left behind.
func (s *Store) Put(ctx context.Context, f fileserve.NewFile, r io.Reader) (fileserve.Meta, error) {
	if err := f.Check(ctx); err != nil {
		return fileserve.Meta{}, err
	}
	m, err := s.add(ctx, f, func(key string) (*fileserve.ContentReader, error) {
		sr := fileserve.NewContentReader(ctx, r, f.MaxBytes)
		bp, _ := s.heads.Get().(*[]byte)
		if bp == nil {
			b := make([]byte, singlePutMax)
			bp = &b
		}
		buf := *bp
		n, err := io.ReadFull(sr, buf)
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			err = s.putBytes(ctx, key, buf[:n], minio.PutObjectOptions{ContentType: "application/octet-stream"})
			if err != nil {
				err = s.s3Error("upload", key, err)
			}
		case err == nil:
			err = s.upload(ctx, key, io.MultiReader(bytes.NewReader(buf), sr), -1)
		}
		if err != nil {
			// An HTTP transport may still read a failed request's body after
			// the call returns: the buffer is not reused.
			return nil, err
		}
		s.heads.Put(bp)
		return sr, nil
	})
	if err != nil {
		return fileserve.Meta{}, fmt.Errorf("s3store: store %q: %w", f.Name, err)
	}
	return m, nil
}

// Adopt uploads the regular file at path and removes it once stored. On
// failure the file is left at path.
func (s *Store) Adopt(ctx context.Context, f fileserve.NewFile, path string) (fileserve.Meta, error) {
	if err := f.Check(ctx); err != nil {
		return fileserve.Meta{}, err
	}
	in, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fileserve.Meta{}, fmt.Errorf("s3store: adopt: %w", err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return fileserve.Meta{}, fmt.Errorf("s3store: adopt: %w", err)
	}
	if f, err = f.Adoptable(path, fi); err != nil {
		return fileserve.Meta{}, err
	}
	m, err := s.add(ctx, f, func(key string) (*fileserve.ContentReader, error) {
		sr := fileserve.NewContentReader(ctx, in, f.MaxBytes)
		return sr, s.upload(ctx, key, sr, fi.Size())
	})
	if err != nil {
		return fileserve.Meta{}, fmt.Errorf("s3store: adopt %s: %w", path, err)
	}
	// The file is stored; failing to remove the original only leaves the
	// caller's file where it was.
	in.Close()
	os.Remove(path)
	return m, nil
}

// add stores a new file: write uploads its content to the data key, then
// the metadata makes it visible. On failure what was uploaded is removed.
func (s *Store) add(ctx context.Context, f fileserve.NewFile, write func(key string) (*fileserve.ContentReader, error)) (fileserve.Meta, error) {
	id := fileserve.NewID()
	s.inflight.Store(id, true)
	defer s.inflight.Delete(id)
	dir := s.fileKey(f.Area, f.Owner, id)
	sr, err := write(dir + dataFile)
	if err == nil {
		m := sr.Meta(f)
		m.ID, m.Created = id, time.Now().UTC()
		if f.Pending != nil {
			err = f.Pending(m)
		}
		if err == nil {
			err = s.putIndex(ctx, m)
		}
		if err == nil {
			err = s.putMeta(ctx, dir, m)
		}
		if err == nil {
			return m, nil
		}
	}
	// The upload failed or was aborted; remove what may have landed. The
	// caller's context may be over, so this one is not tied to it.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	s.client.RemoveObject(cctx, s.bucket, dir+dataFile, minio.RemoveObjectOptions{})
	return fileserve.Meta{}, err
}

// upload PUTs r under key: size bytes, or until EOF when size is -1.
func (s *Store) upload(ctx context.Context, key string, r io.Reader, size int64) error {
	_, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{
		ContentType: "application/octet-stream",
		PartSize:    s.partSize,
	})
	if err != nil {
		return s.s3Error("upload", key, err)
	}
	return nil
}

// putMeta writes the metadata object of the file in dir.
func (s *Store) putMeta(ctx context.Context, dir string, m fileserve.Meta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	key := dir + metaFile
	if err := s.putBytes(ctx, key, b, minio.PutObjectOptions{ContentType: "application/json"}); err != nil {
		return s.s3Error("write metadata", key, err)
	}
	return nil
}

// Stat returns the metadata of a file, or an error wrapping ErrNotFound.
func (s *Store) Stat(ctx context.Context, area fileserve.Area, owner, id string) (fileserve.Meta, error) {
	if !area.Valid() || owner == "" || !fileserve.ValidID(id) {
		return fileserve.Meta{}, fmt.Errorf("s3store: %w (invalid area, owner or id)", fileserve.ErrNotFound)
	}
	m, err := s.getMeta(ctx, s.fileKey(area, owner, id)+metaFile)
	if errors.Is(err, fileserve.ErrNotFound) {
		return fileserve.Meta{}, notFound(area, id)
	}
	if err != nil {
		return fileserve.Meta{}, fmt.Errorf("s3store: %s file %s: %w", area, id, err)
	}
	if m.ID != id || m.Area != area || m.Owner != owner {
		return fileserve.Meta{}, notFound(area, id)
	}
	return m, nil
}

// Open returns a reader of the file's content that fetches it with ranged
// GETs, lazily: opening costs one request, for the metadata. The Object
// reads within ctx.
func (s *Store) Open(ctx context.Context, area fileserve.Area, owner, id string) (fileserve.Object, fileserve.Meta, error) {
	m, err := s.Stat(ctx, area, owner, id)
	if err != nil {
		return nil, fileserve.Meta{}, err
	}
	return &s3Object{ctx: ctx, core: s.core, bucket: s.bucket, key: s.fileKey(area, owner, id) + dataFile, size: m.Size}, m, nil
}

// Delete removes a file: its metadata first, so it is gone for every
// reader at once, then its content, then its expiry index entry. Deleting a missing file, or with an
// invalid id, is not an error.
func (s *Store) Delete(ctx context.Context, area fileserve.Area, owner, id string) error {
	if !area.Valid() || owner == "" || !fileserve.ValidID(id) {
		return nil
	}
	dir := s.fileKey(area, owner, id)
	keys := []string{dir + metaFile, dir + dataFile}
	if m, err := s.getMeta(ctx, dir+metaFile); err == nil && m.ID == id && m.Area == area {
		// Left behind, the entry would be dropped by the sweep that finds it.
		keys = append(keys, s.indexPrefix(area)+fileserve.IndexEntry(m))
	}
	for _, key := range keys {
		if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil && !isNoSuchKey(err) {
			return fmt.Errorf("s3store: delete %s file %s: %w", area, id, s.s3Error("remove", key, err))
		}
	}
	return nil
}

// Ready reports whether the bucket takes files: a small object can be
// written and removed.
func (s *Store) Ready(ctx context.Context) error {
	key := s.prefix + tmpDir + "/ready-" + fileserve.NewID()
	if err := s.putBytes(ctx, key, nil, minio.PutObjectOptions{}); err != nil {
		return fmt.Errorf("s3store: S3 bucket %q is not writable: %w", s.bucket, s.s3Error("write", key, err))
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("s3store: S3 bucket %q: remove probe object: %w", s.bucket, s.s3Error("remove", key, err))
	}
	return nil
}

// Presign returns a URL of the file's content straight from the S3 server,
// valid for ttl, whose response carries the given Content-Type and
// Content-Disposition. Clients reach it at PublicEndpoint.
func (s *Store) Presign(ctx context.Context, m fileserve.Meta, ttl time.Duration, contentType, disposition string) (string, error) {
	params := map[string][]string{
		"response-content-type":        {contentType},
		"response-content-disposition": {disposition},
	}
	u, err := s.presign.PresignedGetObject(ctx, s.bucket, s.fileKey(m.Area, m.Owner, m.ID)+dataFile, ttl, params)
	if err != nil {
		return "", fmt.Errorf("s3store: presign file %s: %w", m.ID, err)
	}
	return u.String(), nil
}

// fileKey is the key prefix of a file: <prefix><area>/<ownerkey>/<id>/.
func (s *Store) fileKey(area fileserve.Area, owner, id string) string {
	return s.prefix + string(area) + "/" + fileserve.OwnerKey(owner) + "/" + id + "/"
}

// getMeta reads and decodes a metadata object.
func (s *Store) getMeta(ctx context.Context, key string) (fileserve.Meta, error) {
	body, _, _, err := s.core.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		if isNoSuchKey(err) {
			return fileserve.Meta{}, fileserve.ErrNotFound
		}
		return fileserve.Meta{}, s.s3Error("read metadata", key, err)
	}
	defer body.Close()
	var m fileserve.Meta
	if err := json.NewDecoder(io.LimitReader(body, 64<<10)).Decode(&m); err != nil {
		return fileserve.Meta{}, fmt.Errorf("metadata %s is corrupt: %w", key, err)
	}
	return m, nil
}

// s3Error says which request failed on which key, keeping err.
func (s *Store) s3Error(what, key string, err error) error {
	if er := minio.ToErrorResponse(err); er.Code == "NoSuchBucket" {
		return fmt.Errorf("%s s3://%s/%s: the bucket does not exist; create it first: %w", what, s.bucket, key, err)
	}
	return fmt.Errorf("%s s3://%s/%s: %w", what, s.bucket, key, err)
}

// Names of a file's two objects, and the prefix of readiness probes: the
// layout of fileserve.DiskStore, as keys.
const (
	dataFile = "data"
	metaFile = "meta.json"
	tmpDir   = "tmp"
)

// notFound is the error for a missing file.
func notFound(area fileserve.Area, id string) error {
	return fmt.Errorf("s3store: %s file %s: %w", area, id, fileserve.ErrNotFound)
}

// isNoSuchKey reports whether err is S3's answer for a missing object.
func isNoSuchKey(err error) bool {
	er := minio.ToErrorResponse(err)
	return er.Code == "NoSuchKey" || er.StatusCode == http.StatusNotFound && er.Code != "NoSuchBucket"
}

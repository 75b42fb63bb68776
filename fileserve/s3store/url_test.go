package s3store

import (
	"context"
	"strings"
	"testing"

	"github.com/agentura/agentura/fileserve"
)

var bg = context.Background()

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want Config
	}{
		{"s3://bucket", Config{Bucket: "bucket"}},
		{"s3://bucket/agents/composer/?region=eu-west-1", Config{Bucket: "bucket", Prefix: "agents/composer/", Region: "eu-west-1"}},
		{"s3://b?endpoint=minio:9000", Config{Bucket: "b", Endpoint: "minio:9000", PathStyle: true}},
		{"s3://b?endpoint=http://minio:9000", Config{Bucket: "b", Endpoint: "minio:9000", PathStyle: true, Insecure: true}},
		{"s3://b?endpoint=https://s3.example.com&path_style=false", Config{Bucket: "b", Endpoint: "s3.example.com"}},
		{"s3://b?endpoint=s3:7070&secure=false&public_endpoint=localhost:7070&part_size=16777216",
			Config{Bucket: "b", Endpoint: "s3:7070", Insecure: true, PathStyle: true, PublicEndpoint: "localhost:7070", PartSize: 16 << 20}},
	} {
		got, err := ParseURL(tc.url)
		if err != nil || got != tc.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tc.url, got, err, tc.want)
		}
	}
	for url, hint := range map[string]string{
		"s3://":                           "s3://<bucket>",
		"file:///data":                    "s3://<bucket>",
		"s3://b?endpoint=minio:9000/path": "host:port",
		"s3://b?endpoint=ftp://minio":     "host:port",
		"s3://b?part_size=1024":           "5 MiB",
		"s3://b?region=x&acl=public":      "unknown parameter",
		"s3://AKIA:secret@b":              "AWS_ACCESS_KEY_ID",
		"s3://b?secure=yes":               "true or false",
	} {
		if _, err := ParseURL(url); err == nil || !strings.Contains(err.Error(), hint) {
			t.Errorf("ParseURL(%q) = %v, want an error saying %q", url, err, hint)
		}
	}
}

// TestOpenStore: importing s3store makes fileserve.OpenStore open s3://
// URLs, with the credentials and default region from env; without
// credentials the URL is refused, by CheckStoreURL as by OpenStore.
func TestOpenStore(t *testing.T) {
	env := func(vars map[string]string) fileserve.Env {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	st, err := fileserve.OpenStore(bg, "s3://b?endpoint=127.0.0.1:1", env(map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "eu-north-1"}))
	if _, ok := st.(*Store); err != nil || !ok {
		t.Fatalf("s3:// = %T, %v", st, err)
	}
	if _, ok := st.(fileserve.Presigner); !ok {
		t.Error("the S3 store is not a fileserve.Presigner")
	}
	if _, ok := st.(fileserve.LocalRoot); ok {
		t.Error("the S3 store claims a local root")
	}
	for _, check := range []func() error{
		func() error { _, err := fileserve.OpenStore(bg, "s3://b", nil); return err },
		func() error {
			return fileserve.CheckStoreURL("s3://b", env(map[string]string{"AWS_ACCESS_KEY_ID": "k"}))
		},
	} {
		if err := check(); err == nil || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
			t.Errorf("s3:// without credentials: %v", err)
		}
	}
}

// TestParseURLHidesSecret: a URL carrying credentials is refused without
// its secret in the error.
func TestParseURLHidesSecret(t *testing.T) {
	for _, u := range []string{"s3://key:topsecret@b?endpoint=minio:9000", "s3://key:top%zzsecret@b"} {
		_, err := ParseURL(u)
		if err == nil || strings.Contains(err.Error(), "topsecret") || strings.Contains(err.Error(), "top%zzsecret") {
			t.Errorf("ParseURL(%q): %v; want an error without the secret", u, err)
		}
	}
}

package fileserve

import (
	"strings"
	"testing"
)

func TestParseS3URL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want S3Config
	}{
		{"s3://bucket", S3Config{Bucket: "bucket"}},
		{"s3://bucket/agents/composer/?region=eu-west-1", S3Config{Bucket: "bucket", Prefix: "agents/composer/", Region: "eu-west-1"}},
		{"s3://b?endpoint=minio:9000", S3Config{Bucket: "b", Endpoint: "minio:9000", PathStyle: true}},
		{"s3://b?endpoint=http://minio:9000", S3Config{Bucket: "b", Endpoint: "minio:9000", PathStyle: true, Insecure: true}},
		{"s3://b?endpoint=https://s3.example.com&path_style=false", S3Config{Bucket: "b", Endpoint: "s3.example.com"}},
		{"s3://b?endpoint=s3:7070&secure=false&public_endpoint=localhost:7070&part_size=16777216",
			S3Config{Bucket: "b", Endpoint: "s3:7070", Insecure: true, PathStyle: true, PublicEndpoint: "localhost:7070", PartSize: 16 << 20}},
	} {
		got, err := ParseS3URL(tc.url)
		if err != nil || got != tc.want {
			t.Errorf("ParseS3URL(%q) = %+v, %v; want %+v", tc.url, got, err, tc.want)
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
		if _, err := ParseS3URL(url); err == nil || !strings.Contains(err.Error(), hint) {
			t.Errorf("ParseS3URL(%q) = %v, want an error saying %q", url, err, hint)
		}
	}
}

func TestOpenStore(t *testing.T) {
	st, err := OpenStore("file://"+t.TempDir(), S3Config{})
	if _, ok := st.(*DiskStore); err != nil || !ok {
		t.Fatalf("file:// = %T, %v", st, err)
	}
	st, err = OpenStore("s3://b?endpoint=127.0.0.1:1", S3Config{AccessKey: "k", SecretKey: "s", Region: "eu-north-1"})
	if _, ok := st.(*S3Store); err != nil || !ok {
		t.Fatalf("s3:// = %T, %v", st, err)
	}
	if _, err := OpenStore("s3://b", S3Config{}); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("s3:// without credentials: %v", err)
	}
	for _, u := range []string{"file://", "ftp://x", "/data"} {
		if _, err := OpenStore(u, S3Config{}); err == nil {
			t.Errorf("OpenStore(%q) succeeded", u)
		}
	}
}

// TestParseS3URLHidesSecret: a URL carrying credentials is refused without
// its secret in the error.
func TestParseS3URLHidesSecret(t *testing.T) {
	for _, u := range []string{"s3://key:topsecret@b?endpoint=minio:9000", "s3://key:top%zzsecret@b"} {
		_, err := ParseS3URL(u)
		if err == nil || strings.Contains(err.Error(), "topsecret") || strings.Contains(err.Error(), "top%zzsecret") {
			t.Errorf("ParseS3URL(%q): %v; want an error without the secret", u, err)
		}
	}
	if got := RedactURL("s3://key:secret@b/p?endpoint=x:1"); got != "s3://REDACTED@b/p?endpoint=x:1" {
		t.Errorf("RedactURL = %q", got)
	}
	if got := RedactURL("file:///data"); got != "file:///data" {
		t.Errorf("RedactURL = %q", got)
	}
}

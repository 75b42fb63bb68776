package agentcore

import (
	"errors"
	"strings"
	"testing"

	_ "github.com/agentura/agentura/fileserve/s3store"
)

// TestS3StorageConfig: s3:// storage needs credentials and a well-formed
// URL, AGENT_S3_REDIRECT needs s3:// storage, and each error names the
// variable and what to do.
func TestS3StorageConfig(t *testing.T) {
	creds := map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
	for _, tc := range []struct {
		env     map[string]string
		wantVar string // "" = valid
		hint    string
	}{
		{map[string]string{"AGENT_STORAGE_URL": "s3://files?endpoint=minio:9000&secure=false"}, "", ""},
		{map[string]string{"AGENT_STORAGE_URL": "s3://files?endpoint=minio:9000", "AGENT_S3_REDIRECT": "true"}, "", ""},
		{map[string]string{"AGENT_STORAGE_URL": "s3://files?endpoint=minio:9000", "AWS_ACCESS_KEY_ID": ""}, "AGENT_STORAGE_URL", "AWS_ACCESS_KEY_ID"},
		{map[string]string{"AGENT_STORAGE_URL": "s3://files?endpoint=minio:9000&pathstyle=true"}, "AGENT_STORAGE_URL", "unknown parameter"},
		{map[string]string{"AGENT_STORAGE_URL": "s3://files?secure=maybe"}, "AGENT_STORAGE_URL", "true or false"},
		{map[string]string{"AGENT_STORAGE_URL": "s3://key:secret@files"}, "AGENT_STORAGE_URL", "do not belong in the URL"},
		{map[string]string{"AGENT_S3_REDIRECT": "true"}, "AGENT_S3_REDIRECT", "s3://"},
		{map[string]string{"AGENT_STORAGE_URL": "s3://files", "AGENT_S3_REDIRECT": "often"}, "AGENT_S3_REDIRECT", "boolean"},
		{map[string]string{"AGENT_STORAGE_URL": "gs://files"}, "AGENT_STORAGE_URL", "s3://<bucket>"},
	} {
		env := map[string]string{}
		for k, v := range creds {
			env[k] = v
		}
		for k, v := range tc.env {
			env[k] = v
		}
		cfg, err := ConfigFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "x", ":8001")
		if tc.wantVar == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.env, err)
			} else if cfg.StorageEnv["AWS_ACCESS_KEY_ID"] != "k" || cfg.StorageEnv["AWS_SECRET_ACCESS_KEY"] != "s" {
				t.Errorf("%v: credentials not read: %+v", tc.env, cfg)
			}
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Var != tc.wantVar || !strings.Contains(err.Error(), tc.hint) {
			t.Errorf("%v: err = %v, want a ConfigError on %s saying %q", tc.env, err, tc.wantVar, tc.hint)
		}
	}
}

// TestStorageURLSecretNotEchoed: credentials wrongly put into
// AGENT_STORAGE_URL are refused without being repeated in the error, which
// ends up in logs.
func TestStorageURLSecretNotEchoed(t *testing.T) {
	for _, u := range []string{
		"s3://AKIAEXAMPLE:topsecret@files?endpoint=minio:9000",
		"s3://AKIAEXAMPLE:top%zzsecret@files",
		"s3://AKIAEXAMPLE:topsecret@files?endpoint=minio:9000&nope=1",
	} {
		env := map[string]string{"AGENT_STORAGE_URL": u, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
		_, err := ConfigFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "x", ":8001")
		if err == nil {
			t.Fatalf("%s: accepted", u)
		}
		if strings.Contains(err.Error(), "topsecret") || strings.Contains(err.Error(), "top%zzsecret") {
			t.Errorf("the error shows the secret: %v", err)
		}
		if !strings.Contains(err.Error(), "AGENT_STORAGE_URL") {
			t.Errorf("the error does not name the variable: %v", err)
		}
	}
}

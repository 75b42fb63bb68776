package agentcore

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/transfer"
)

// checkStorage checks where files will live, without opening the store:
// Config.Store or the storage URL with the credentials of Config, and
// whether AGENT_S3_REDIRECT can be honoured. A scheme is known when a
// package registered it (import fileserve/s3store for s3://).
func (c *Config) checkStorage() error {
	if c.Store != nil {
		if c.StorageURL != "" && c.StorageURL != "file://"+c.DataDir {
			return &ConfigError{Var: "AGENT_STORAGE_URL", Value: transfer.RedactUserinfo(c.StorageURL), Err: errors.New("the program hands the service its own store (Config.Store); leave AGENT_STORAGE_URL unset")}
		}
		return nil // AGENT_S3_REDIRECT is checked against the store by openStore
	}
	// Credentials wrongly put into the URL stay out of the error.
	if err := fileserve.CheckStoreURL(c.StorageURL, c.storeEnv()); err != nil {
		return &ConfigError{Var: "AGENT_STORAGE_URL", Value: transfer.RedactUserinfo(c.StorageURL), Err: err}
	}
	if c.S3Redirect && strings.HasPrefix(c.StorageURL, "file://") {
		return &ConfigError{Var: "AGENT_S3_REDIRECT", Value: "true", Err: errors.New("redirects go to presigned S3 URLs: set AGENT_STORAGE_URL to s3://<bucket>?endpoint=<host:port>, or leave AGENT_S3_REDIRECT unset")}
	}
	return nil
}

// storeEnv gives a store opener the variables it declared, as StorageEnv
// holds them. Nothing else is set.
func (c *Config) storeEnv() fileserve.Env {
	return func(name string) (string, bool) {
		v, ok := c.StorageEnv[name]
		return v, ok && v != ""
	}
}

// openStore returns the store of a checked Config (Config.Store, or the
// one StorageURL names), the folder that holds the per-call work folders,
// and the Presigner of AGENT_S3_REDIRECT (nil: downloads stream through
// the service). Work folders are per-process scratch on local disk: under
// the store's root when it has one, so outputs are adopted by rename, in
// DataDir otherwise.
func (c *Config) openStore() (store fileserve.Store, scratch string, redirect fileserve.Presigner, err error) {
	store = c.Store
	if store == nil {
		if store, err = fileserve.OpenStore(context.Background(), c.StorageURL, c.storeEnv()); err != nil {
			return nil, "", nil, &ConfigError{Var: "AGENT_STORAGE_URL", Value: transfer.RedactUserinfo(c.StorageURL), Err: err}
		}
	}
	scratch = c.DataDir
	if lr, ok := fileserve.As[fileserve.LocalRoot](store); ok {
		scratch = lr.Root()
	}
	if c.S3Redirect {
		p, ok := fileserve.As[fileserve.Presigner](store)
		if !ok {
			return nil, "", nil, &ConfigError{Var: "AGENT_S3_REDIRECT", Value: "true", Err: errors.New("the store hands out no presigned URLs; leave AGENT_S3_REDIRECT unset")}
		}
		redirect = p
	}
	return store, scratch, redirect, nil
}

// areaTTL is the time to live of the files of an area: AGENT_OUTPUT_TTL
// for outputs, AGENT_STAGING_TTL for staged inputs.
func (c *Config) areaTTL(a fileserve.Area) time.Duration {
	if a == fileserve.Outputs {
		return c.OutputTTL
	}
	return c.StagingTTL
}

// journalRecords is where the output journals of st go: nil, into the call
// folders, when those lie in the store (a disk store: they are under its
// root), else the store's records (S3), which a replica coming back on a
// fresh volume still finds (see callfiles.Journal).
func journalRecords(st fileserve.Store) fileserve.RecordStore {
	if _, local := fileserve.As[fileserve.LocalRoot](st); local {
		return nil
	}
	rs, _ := fileserve.As[fileserve.RecordStore](st)
	return rs
}

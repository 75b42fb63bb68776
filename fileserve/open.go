package fileserve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agentura/agentura/settings"
	"github.com/agentura/agentura/transfer"
)

// Env looks up a setting that does not belong in a storage URL, such as a
// credential (AWS_SECRET_ACCESS_KEY): its value and whether it is set.
// os.LookupEnv is one.
type Env func(name string) (string, bool)

// StoreOpener opens the stores of one URL scheme. A store package registers
// one with RegisterScheme, so that OpenStore understands its URLs.
type StoreOpener interface {
	// CheckURL reports what is wrong with rawURL and the settings env gives,
	// without opening anything or contacting a server, so that start-up
	// refuses a bad setting before it does anything else.
	CheckURL(rawURL string, env Env) error
	// OpenURL opens the store rawURL names.
	OpenURL(ctx context.Context, rawURL string, env Env) (Store, error)
}

// schemes are the registered openers by scheme; file is built in.
var schemes = struct {
	sync.RWMutex
	m map[string]StoreOpener
}{m: map[string]StoreOpener{"file": diskOpener{}}}

// A SettingsDeclarer is an opener that declares the settings its stores
// read from their Env (each variable, its default and meaning: the s3
// opener's AWS_*), so that a program reads and documents them with its own
// without naming them (StoreSettings). A new backend thus touches no file of
// the program.
type SettingsDeclarer interface {
	Settings() settings.List
}

// StoreSettings lists the settings the registered schemes declare, in the
// order of their schemes' names.
func StoreSettings() settings.List {
	schemes.RLock()
	defer schemes.RUnlock()
	var out settings.List
	for _, name := range slices.Sorted(maps.Keys(schemes.m)) {
		if d, ok := schemes.m[name].(SettingsDeclarer); ok {
			out = append(out, d.Settings()...)
		}
	}
	return out
}

// RegisterScheme makes OpenStore open URLs of scheme ("s3" for s3://...)
// with o. Store packages call it from their init function, as database/sql
// drivers register themselves, so that a program gains a scheme by
// importing the package (fileserve/s3store for s3://) and a program that
// does not import it does not link it. It panics when o is nil or the
// scheme is taken.
func RegisterScheme(scheme string, o StoreOpener) {
	if o == nil {
		panic("fileserve: RegisterScheme of " + scheme + " with a nil opener")
	}
	schemes.Lock()
	defer schemes.Unlock()
	if _, dup := schemes.m[scheme]; dup {
		panic("fileserve: RegisterScheme called twice for scheme " + scheme)
	}
	schemes.m[scheme] = o
}

// OpenStore opens the store a storage URL (AGENT_STORAGE_URL) names, with
// the opener registered for its scheme:
//
//	file:///data                     a DiskStore rooted at /data (built in)
//	s3://bucket[/prefix]?endpoint=…  an S3 store (import fileserve/s3store)
//
// env gives what the URL does not say, such as credentials; with a nil env
// nothing is set. A scheme no imported package registered is an error that
// says which package to import.
func OpenStore(ctx context.Context, rawURL string, env Env) (Store, error) {
	o, err := opener(rawURL)
	if err != nil {
		return nil, err
	}
	return o.OpenURL(ctx, rawURL, orNoEnv(env))
}

// CheckStoreURL reports what is wrong with a storage URL and the settings
// env gives, as OpenStore would, without opening the store.
func CheckStoreURL(rawURL string, env Env) error {
	o, err := opener(rawURL)
	if err != nil {
		return err
	}
	return o.CheckURL(rawURL, orNoEnv(env))
}

// opener returns the opener of rawURL's scheme.
func opener(rawURL string) (StoreOpener, error) {
	scheme, _, ok := strings.Cut(rawURL, "://")
	schemes.RLock()
	o, known := schemes.m[scheme]
	names := slices.Sorted(maps.Keys(schemes.m))
	schemes.RUnlock()
	if ok && known {
		return o, nil
	}
	why := "not a URL"
	if ok {
		why = "no store is registered for " + scheme + "://"
	}
	return nil, fmt.Errorf("fileserve: storage URL %q: %s (this program knows %s://); use file:///<folder>, or s3://<bucket>?endpoint=<host:port> in a program that imports github.com/agentura/agentura/fileserve/s3store",
		transfer.RedactUserinfo(rawURL), why, strings.Join(names, "://, "))
}

// orNoEnv returns env, or an Env in which nothing is set.
func orNoEnv(env Env) Env {
	if env == nil {
		return func(string) (string, bool) { return "", false }
	}
	return env
}

// diskOpener opens file:// URLs: file:///data is a DiskStore at /data; the
// rest of the URL is the folder as it is written (file://data is the
// relative folder data).
type diskOpener struct{}

// CheckURL requires a folder.
func (diskOpener) CheckURL(rawURL string, _ Env) error {
	_, err := diskDir(rawURL)
	return err
}

// OpenURL opens the DiskStore.
func (diskOpener) OpenURL(_ context.Context, rawURL string, _ Env) (Store, error) {
	dir, err := diskDir(rawURL)
	if err != nil {
		return nil, err
	}
	return NewDiskStore(dir)
}

// diskDir returns the folder of a file:// URL.
func diskDir(rawURL string) (string, error) {
	dir, _ := strings.CutPrefix(rawURL, "file://")
	if dir == "" {
		return "", errors.New("fileserve: file:// needs a folder, e.g. file:///data")
	}
	return dir, nil
}

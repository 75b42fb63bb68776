package fileserve

import (
	"context"
	"strings"
	"testing"
)

// TestOpenStore: file:// is built in; a scheme nobody registered is refused
// with the package to import; a bad URL is refused by CheckStoreURL as by
// OpenStore.
func TestOpenStore(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenStore(context.Background(), "file://"+dir, nil)
	if d, ok := st.(*DiskStore); err != nil || !ok || d.Root() != dir {
		t.Fatalf("file:// = %T, %v", st, err)
	}
	if lr, ok := st.(LocalRoot); !ok || lr.Root() != dir {
		t.Errorf("a DiskStore is not a LocalRoot at %s", dir)
	}
	if err := CheckStoreURL("file://"+dir, nil); err != nil {
		t.Errorf("CheckStoreURL(file://...) = %v", err)
	}
	for u, hint := range map[string]string{
		"file://":                    "needs a folder",
		"s3://b?endpoint=minio:9000": "fileserve/s3store",
		"gs://b":                     "no store is registered for gs://",
		"/data":                      "not a URL",
		"ftp://key:topsecret@host/x": "REDACTED",
	} {
		_, err := OpenStore(context.Background(), u, nil)
		cerr := CheckStoreURL(u, nil)
		for _, err := range []error{err, cerr} {
			if err == nil || !strings.Contains(err.Error(), hint) || strings.Contains(err.Error(), "topsecret") {
				t.Errorf("%s: %v, want an error saying %q", u, err, hint)
			}
		}
	}
}

// TestRegisterScheme: a registered opener opens its scheme; registering a
// scheme twice panics, as database/sql's Register does.
func TestRegisterScheme(t *testing.T) {
	scheme := "test" + strings.ReplaceAll(NewID()[24:], "-", "") // the registry outlives a run of the test (-count)
	RegisterScheme(scheme, diskAt{t.TempDir()})
	st, err := OpenStore(context.Background(), scheme+"://anything", nil)
	if _, ok := st.(*DiskStore); err != nil || !ok {
		t.Fatalf("%s:// = %T, %v", scheme, st, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second RegisterScheme of file did not panic")
		}
	}()
	RegisterScheme("file", diskOpener{})
}

// diskAt opens a DiskStore at its folder whatever the URL.
type diskAt struct{ dir string }

func (d diskAt) CheckURL(string, Env) error { return nil }
func (d diskAt) OpenURL(context.Context, string, Env) (Store, error) {
	return NewDiskStore(d.dir)
}

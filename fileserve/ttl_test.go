package fileserve

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TTLStore hides a file past its TTL from every read, before it is swept.
func TestTTLStoreHidesExpiredFiles(t *testing.T) {
	ctx := context.Background()
	disk := newTestStore(t)
	var ahead time.Duration
	st := NewTTLStore(disk, func(a Area) time.Duration {
		if a == Outputs {
			return 0 // forever
		}
		return time.Minute
	}, func() time.Time { return time.Now().Add(ahead) })
	staged, _ := st.Put(ctx, NewFile{Area: Staging, Owner: "alice", Name: "s"}, strings.NewReader("staged"))
	kept, _ := st.Put(ctx, NewFile{Area: Outputs, Owner: "alice", Name: "o"}, strings.NewReader("output"))
	if _, err := st.Stat(ctx, Staging, "alice", staged.ID); err != nil {
		t.Fatalf("Stat of a fresh file: %v", err)
	}
	ahead = time.Minute
	if _, err := st.Stat(ctx, Staging, "alice", staged.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Stat of an expired file: %v; want ErrNotFound", err)
	}
	if _, _, err := st.Open(ctx, Staging, "alice", staged.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open of an expired file: %v; want ErrNotFound", err)
	}
	if _, _, _, err := st.SmallReader().ReadSmall(ctx, Staging, "alice", staged.ID, make([]byte, 100)); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadSmall of an expired file: %v; want ErrNotFound", err)
	}
	n := 0
	st.Walk(ctx, Staging, func(Meta) error { n++; return nil })
	if n != 0 {
		t.Errorf("Walk lists %d expired files", n)
	}
	if _, err := disk.Stat(ctx, Staging, "alice", staged.ID); err != nil {
		t.Errorf("the store underneath lost the file the sweeper must delete: %v", err)
	}
	if obj, _, err := st.Open(ctx, Outputs, "alice", kept.ID); err != nil {
		t.Errorf("an area kept forever: %v", err)
	} else {
		obj.Close()
	}
}

package revocation_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/revocation"
)

// Two replicas sharing a store: what one revokes or deletes, the other
// refuses after its next poll, and its quota hears of the deletion once.
func TestListSharedThroughTheStore(t *testing.T) {
	ctx := context.Background()
	st, err := fileserve.NewDiskStore(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	a := revocation.New(st, nil, nil)
	b := revocation.New(st, func(id string) { deleted = append(deleted, id) }, nil)
	const fileID, token, other = "0190d5c2-0000-7000-8000-000000000001", "header.body.sig", "header.body.sig2"
	if a.Revoked(token) {
		t.Fatal("a fresh list revokes a token")
	}
	if err := a.RevokeToken(ctx, token); err != nil {
		t.Fatal(err)
	}
	if !a.Revoked(token) || a.Revoked(other) {
		t.Fatal("the revoking replica: want the token revoked, another token of the file not")
	}
	if b.Revoked(token) {
		t.Fatal("the other replica knew before polling")
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if !b.Revoked(token) || b.Revoked(other) {
		t.Fatal("the other replica after a poll: want the token revoked, another token of the file not")
	}
	if err := a.FileDeleted(ctx, fileID); err != nil {
		t.Fatal(err)
	}
	b.Refresh(ctx)
	b.Refresh(ctx)
	if len(deleted) != 1 || deleted[0] != fileID {
		t.Fatalf("the other replica's quota heard of %v; want the file once", deleted)
	}
	// The sweeper expires the records; the list forgets them.
	if _, err := st.ExpireRecords(ctx, revocation.Kind, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	c := revocation.New(st, nil, nil)
	c.Refresh(ctx)
	if c.Revoked(token) {
		t.Fatal("expired records still revoke")
	}
}

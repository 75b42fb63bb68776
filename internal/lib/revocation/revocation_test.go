package revocation_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
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
	a := revocation.New(st, revocation.Options{})
	b := revocation.New(st, revocation.Options{OnDeleted: func(id string) { deleted = append(deleted, id) }})
	const fileID, token, other = "0190d5c2-0000-7000-8000-000000000001", "header.body.sig", "header.body.sig2"
	if a.Revoked(token) {
		t.Fatal("a fresh list revokes a token")
	}
	if err := a.RevokeToken(ctx, token, time.Now().Add(time.Hour), revocation.Revoker{Key: "owner alice"}); err != nil {
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
	c := revocation.New(st, revocation.Options{})
	c.Refresh(ctx)
	if c.Revoked(token) {
		t.Fatal("expired records still revoke")
	}
}

// records lists the revocation records in st.
func records(t *testing.T, st fileserve.RecordStore) []fileserve.RecordInfo {
	t.Helper()
	infos, err := st.Records(context.Background(), revocation.Kind, "*")
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

// One revoker may have MaxPerOwner live revocations, over every replica:
// past it RevokeToken fails with a *LimitError and writes no record;
// another revoker is not held back by it; revoking a token again, or one
// expired past the grace, writes nothing; once the tokens lapse the
// replicas forget them, delete their records, and the revoker may revoke
// again.
func TestRevocationsCappedPerRevoker(t *testing.T) {
	ctx := context.Background()
	st, err := fileserve.NewDiskStore(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	const max = 5
	a := revocation.New(st, revocation.Options{MaxPerOwner: max})
	b := revocation.New(st, revocation.Options{MaxPerOwner: max})
	clock := time.Now()
	for _, l := range []*revocation.List{a, b} {
		revocation.SetClock(l, func() time.Time { return clock })
	}
	soon := clock.Add(2 * time.Second)
	for i := range max {
		l := a
		if i%2 == 1 {
			l = b
		}
		if err := l.RevokeToken(ctx, fmt.Sprintf("tok.%d", i), soon.Add(-revocation.Grace), revocation.Revoker{Key: "client 192.0.2.1"}); err != nil {
			t.Fatal(err)
		}
		a.Refresh(ctx)
		b.Refresh(ctx)
	}
	for _, l := range []*revocation.List{a, b} {
		err := l.RevokeToken(ctx, "tok.over", time.Now().Add(time.Hour), revocation.Revoker{Key: "client 192.0.2.1"})
		var le *revocation.LimitError
		if !errors.As(err, &le) || le.Max != max || le.RetryAfter <= 0 || le.RetryAfter > 3*time.Second {
			t.Fatalf("a revocation past the cap: %v (%+v); want a LimitError retrying within 3 s", err, le)
		}
	}
	if n := len(records(t, st)); n != max {
		t.Fatalf("%d records after the refused revocations, want %d", n, max)
	}
	if a.Revoked("tok.over") {
		t.Error("a refused revocation revokes")
	}
	// Another revoker, a revoked token again, an expired token.
	if err := a.RevokeToken(ctx, "tok.bob", time.Now().Add(time.Hour), revocation.Revoker{Key: "owner bob"}); err != nil {
		t.Fatalf("another revoker is held back: %v", err)
	}
	if err := a.RevokeToken(ctx, "tok.0", time.Now().Add(time.Hour), revocation.Revoker{Key: "owner bob"}); err != nil {
		t.Fatalf("revoking a revoked token again: %v", err)
	}
	if err := a.RevokeToken(ctx, "tok.old", time.Now().Add(-revocation.Grace-time.Second), revocation.Revoker{Key: "owner bob"}); err != nil {
		t.Fatalf("revoking an expired token: %v", err)
	}
	if n := len(records(t, st)); n != max+1 {
		t.Fatalf("%d records, want %d: revoking a token again or an expired one wrote one", n, max+1)
	}
	// The first five lapse: forgotten, their records deleted, room again.
	clock = soon.Add(1100 * time.Millisecond)
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if b.Revoked("tok.0") {
		t.Error("a lapsed revocation is still kept")
	}
	if !b.Revoked("tok.bob") {
		t.Error("a live revocation was forgotten")
	}
	if n := len(records(t, st)); n != 1 {
		t.Errorf("%d records after the tokens lapsed, want 1 (bob's)", n)
	}
	a.Refresh(ctx)
	if err := a.RevokeToken(ctx, "tok.new", time.Now().Add(time.Hour), revocation.Revoker{Key: "client 192.0.2.1"}); err != nil {
		t.Errorf("the revoker after its revocations lapsed: %v", err)
	}
}

// A list kept in the process alone (a store without records) is capped
// and forgets lapsed tokens too.
func TestRevocationsCappedInMemory(t *testing.T) {
	ctx := context.Background()
	l := revocation.New(nil, revocation.Options{MaxPerOwner: 2})
	clock := time.Now()
	revocation.SetClock(l, func() time.Time { return clock })
	lapse := clock.Add(time.Second - revocation.Grace)
	l.RevokeToken(ctx, "t1", lapse, revocation.Revoker{Key: "x"})
	l.RevokeToken(ctx, "t2", lapse, revocation.Revoker{Key: "x"})
	var le *revocation.LimitError
	if err := l.RevokeToken(ctx, "t3", time.Now().Add(time.Hour), revocation.Revoker{Key: "x"}); !errors.As(err, &le) {
		t.Fatalf("past the cap: %v, want a LimitError", err)
	}
	clock = clock.Add(1100 * time.Millisecond)
	if err := l.RevokeToken(ctx, "t3", time.Now().Add(time.Hour), revocation.Revoker{Key: "x"}); err != nil {
		t.Fatalf("after the first lapsed: %v", err)
	}
	if l.Revoked("t1") || !l.Revoked("t3") {
		t.Error("want t1 forgotten, t3 revoked")
	}
}

// slowRecords is a store whose record writes take as long as an S3 PUT.
type slowRecords struct{ *fileserve.DiskStore }

func (s slowRecords) PutRecord(ctx context.Context, kind, owner, name string, data []byte) error {
	time.Sleep(20 * time.Millisecond)
	return s.DiskStore.PutRecord(ctx, kind, owner, name, data)
}

// Revocations of one revoker arriving together on one replica meet the
// cap one after another: none passes it while another's record is being
// written.
func TestRevocationsCappedWhenConcurrent(t *testing.T) {
	ctx := context.Background()
	st, err := fileserve.NewDiskStore(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	const max = 5
	l := revocation.New(slowRecords{st}, revocation.Options{MaxPerOwner: max})
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, refused := 0, 0
	for i := range 40 {
		wg.Go(func() {
			err := l.RevokeToken(ctx, fmt.Sprintf("tok.%d", i), time.Now().Add(time.Hour), revocation.Revoker{Key: "client 192.0.2.7"})
			var le *revocation.LimitError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				accepted++
			case errors.As(err, &le):
				refused++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if accepted != max || refused != 40-max || len(records(t, st)) != max {
		t.Errorf("40 revocations at once against a cap of %d: %d accepted, %d refused, %d records", max, accepted, refused, len(records(t, st)))
	}
}

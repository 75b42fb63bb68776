package transport

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// Attack: one owner announcing uploads it never sends cannot take every
// place of the in-memory ticket store: it is refused at its own cap, with
// an error naming the cap, while another owner still gets tickets; and a
// ticket already kept is updated (its upload recorded) even at the caps.
func TestMemTicketsCappedPerOwner(t *testing.T) {
	ctx := context.Background()
	f := &fileTickets{ttl: time.Hour}
	ticket := fileTicket{Name: "a.txt", Size: 1, Expires: time.Now().Add(time.Hour)}
	var first string
	for i := range maxMemTicketsPerOwner {
		id := fileserve.NewID()
		if i == 0 {
			first = id
		}
		if err := f.put(ctx, "mallory", id, ticket); err != nil {
			t.Fatalf("ticket %d of %d: %v", i+1, maxMemTicketsPerOwner, err)
		}
	}
	err := f.put(ctx, "mallory", fileserve.NewID(), ticket)
	if err == nil {
		t.Fatalf("mallory kept more than %d pending uploads", maxMemTicketsPerOwner)
	}
	for _, want := range []string{"mallory", "pending", "1000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not name %q", err, want)
		}
	}
	if err := f.put(ctx, "alice", fileserve.NewID(), ticket); err != nil {
		t.Errorf("alice refused while mallory is at her cap: %v", err)
	}
	staged := ticket
	staged.Staged = fileserve.NewID()
	if err := f.put(ctx, "mallory", first, staged); err != nil {
		t.Errorf("recording an upload of a kept ticket at the cap: %v", err)
	}
	if got, err := f.get(ctx, "mallory", first); err != nil || got.Staged != staged.Staged {
		t.Errorf("the recorded upload: %+v %v", got, err)
	}
}

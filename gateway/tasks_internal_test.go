package gateway

import (
	"testing"
	"time"

	"github.com/agentura/agentura/client"
)

// An entry past its TTL is replaced by the one made anew from its id when
// the agent still has the task, so the next tasks/get is served from the
// map, not read (its files saved) again; and a task whose TTL has passed
// by the gateway's clock though the agent still shows it (the agent's
// clock runs behind) is kept, not dropped at once.
func TestHostTasksReplaceExpired(t *testing.T) {
	h := &hostTasks{max: 2}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := &passedTask{hostID: "0.a", added: t0, expires: t0.Add(time.Second)}
	if err := h.put(old, t0); err != nil {
		t.Fatal(err)
	}

	t1 := t0.Add(2 * time.Second)
	if h.get("0.a", t1) != nil {
		t.Fatal("an entry past its TTL is served")
	}
	fresh := &passedTask{hostID: "0.a", added: t1}
	h.saw(fresh, &client.Task{ID: "a", Status: client.TaskCompleted, CreatedAt: t1, TTL: 10 * time.Second}, t1)
	if got := h.get("0.a", t1); got != fresh || !fresh.kept || old.kept {
		t.Errorf("after reading the task anew: get = %p (fresh %p, old %p), fresh kept %v, old kept %v; want the fresh entry kept in place of the old",
			got, fresh, old, fresh.kept, old.kept)
	}

	behind := &passedTask{hostID: "0.b", added: t1}
	h.saw(behind, &client.Task{ID: "b", Status: client.TaskWorking, CreatedAt: t1.Add(-20 * time.Second), TTL: 10 * time.Second}, t1)
	if got := h.get("0.b", t1.Add(time.Second)); got != behind {
		t.Errorf("a task the agent still has past its TTL by the gateway's clock: get = %p, want %p (expires %v)", got, behind, behind.expires)
	}
	if n := h.len(); n != 2 {
		t.Errorf("%d entries, want 2", n)
	}
}

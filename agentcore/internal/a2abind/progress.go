package a2abind

import (
	"cmp"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/agentura/agentura/agentcore/internal/calls"
)

// a2aProgressEvent is a "working" status update carrying a progress report:
// its text in the message, the numbers in the metadata.
func a2aProgressEvent(rc *a2asrv.RequestContext, tool string, p calls.Progress) *a2a.TaskStatusUpdateEvent {
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, agentText(rc, cmp.Or(p.Message, tool+" in progress")))
	ev.Metadata = map[string]any{"progress": p.Done}
	if p.Total > 0 {
		ev.Metadata["total"] = p.Total
	}
	return ev
}

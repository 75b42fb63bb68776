package tasks

import (
	"time"

	"github.com/agentura/agentura/settings"
)

// Policy holds the settings of tasks, a section of agentcore.Config.
type Policy struct {
	A2AStatusInterval time.Duration // AGENT_A2A_STATUS_INTERVAL
	TaskLease         time.Duration // AGENT_TASK_LEASE
	TasksPerOwner     int           // AGENT_TASKS_PER_OWNER
}

// DefaultA2AStatusInterval is how often a running A2A task reports that it
// is still working, on message/stream.
const DefaultA2AStatusInterval = 5 * time.Second

// Settings declares the settings of tasks, each bound to its field of p.
func (p *Policy) Settings() settings.List {
	return settings.List{
		settings.Duration(&p.A2AStatusInterval, "AGENT_A2A_STATUS_INTERVAL", DefaultA2AStatusInterval,
			"how often a running A2A task reports \"still running\" on `message/stream`"),
		settings.Duration(&p.TaskLease, "AGENT_TASK_LEASE", defaultLease,
			"lease of a running task (MCP or A2A), renewed by its replica every quarter of it: a task whose replica "+
				"died is reported `failed`, with the reason, at most this long after the last renewal"),
		settings.Int(&p.TasksPerOwner, "AGENT_TASKS_PER_OWNER", defaultPerOwner,
			"tasks (MCP and A2A) one owner may have running at once, over every replica sharing the store; "+
				"a new one beyond it is refused, saying so").Positive(),
	}
}

// Command benchagent is an agent without tools: only the file service
// (/files/, /uploads, /uploads/tus/), for `make bench-nginx`, which puts
// its downloads beside nginx's and measures its memory over a 1 GiB round
// trip. It takes every AGENT_* setting an agent takes.
package main

import (
	"os"

	"github.com/agentura/agentura/agentcore"
)

func main() {
	info := agentcore.Info{Name: "bench-agent", Version: "0", Title: "the file service alone, for benchmarks"}
	os.Exit(agentcore.Main(info, ":8099", os.Args[1:], func(*agentcore.Service) error { return nil }))
}

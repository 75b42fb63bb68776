// Command benchagent is an agent without tools: only the file service
// (/files/, /uploads, /uploads/tus/), for `make bench-nginx`, which puts
// its downloads beside nginx's and measures its memory over a 1 GiB round
// trip. It takes every AGENT_* setting an agent takes.
//
// `benchagent fileserver ADDR DIR` serves DIR with Go's http.FileServer
// instead: the bench's third column, what net/http itself does on the
// same machine.
package main

import (
	"fmt"
	"net/http"
	"os"

	"github.com/agentura/agentura/agentcore"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "fileserver" {
		err := http.ListenAndServe(os.Args[2], http.FileServer(http.Dir(os.Args[3])))
		fmt.Fprintln(os.Stderr, "benchagent fileserver:", err)
		os.Exit(1)
	}
	info := agentcore.Info{Name: "bench-agent", Version: "0", Title: "the file service alone, for benchmarks"}
	os.Exit(agentcore.Main(info, ":8099", os.Args[1:], func(*agentcore.Service) error { return nil }))
}

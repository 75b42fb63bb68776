// Command httpprobe is the health check of images that have no shell and no
// curl (the versitygw image of deploy/docker-compose.scale.yml runs on
// scratch): `httpprobe URL` exits 0 when a GET of URL answers 200 within five
// seconds, and 1 with the reason on stderr otherwise. It never uses a proxy.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agentura/agentura/internal/lib/probe"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: httpprobe URL (exits 0 when a GET of URL answers 200)")
		os.Exit(2)
	}
	if err := probe.Ready(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "httpprobe:", err)
		os.Exit(1)
	}
}

// Command agentura is a command-line MCP host built on the client package:
// it lists an agent's tools with their file parameters and calls a tool the
// way a language model would, naming files, while the files themselves move
// beside the call (inline, through /uploads, back from /files/).
//
//	agentura tools http://localhost:8001/mcp
//	agentura call http://localhost:8001/mcp ocr_document --attach scan.png --json '{"source": "scan.png"}' --out results
//	agentura call --stdio inspect_file --attach a.pdf --json '{"source": "a.pdf"}' -- fileagent --stdio
//	agentura task get http://localhost:8001/mcp 5TQ2GZ4N3XKJ7WMCQ2V6Y4ZJ3A --out results
//
// Exit status: 0 on success, 1 when the call failed (a tool error, a name not
// in the registry, a produced file that could not be fetched), 2 on a usage
// error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentura/agentura/internal/lib/otelsetup"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := traced(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	usageHeader = `agentura — call MCP agents that take files in and hand files out

Usage:
  agentura tools [flags] <url>
  agentura call  [flags] <url> <tool> [--attach PATH]... [--json ARGS] [--out DIR]
  agentura call  [flags] --stdio <tool> [--attach PATH]... [--json ARGS] -- CMD [ARG]...
  agentura task get [flags] <url> <id> [--out DIR]   (the result of a call the agent ran as a task)
  agentura task cancel [flags] <url> <id>
  agentura gateway [flags] [<url>]...   (an MCP server fronting agents for a chat host)
  agentura check [flags] <url>          (what of the file contract a server meets; --standard: by SEP-2631 alone; --stdio -- CMD too)
  agentura new   DIR --module PATH [--replace LOCAL_CHECKOUT]   (scaffold an agent module)

<url> is the agent's MCP endpoint (http://localhost:8001/mcp; a bare base URL gets /mcp).
Run "agentura <command> -h" for the flags of a command.
`
)

// traced is run under the tracer provider the OTEL_* variables ask for
// (off without them): a command (but the gateway, whose host's requests
// are each a trace of their own) is one trace, its span the parent of
// every request it sends, and the spans are flushed before the process
// exits.
func traced(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	tracing, err := otelsetup.Start(ctx, "agentura")
	if err != nil {
		fmt.Fprintf(stderr, "agentura: %v\n", err)
		return exitUsage
	}
	defer func() {
		fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tracing.Shutdown(fctx); err != nil {
			fmt.Fprintf(stderr, "agentura: telemetry lost: %v\n", err)
		}
	}()
	if !tracing.Enabled() || len(args) == 0 || args[0] == "gateway" {
		return run(ctx, args, stdout, stderr)
	}
	ctx, span := otel.Tracer("github.com/agentura/agentura/cmd/agentura").Start(ctx, "agentura "+args[0])
	code := run(ctx, args, stdout, stderr)
	if code != exitOK {
		span.SetStatus(codes.Error, fmt.Sprintf("exit status %d", code))
	}
	span.End()
	return code
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageHeader)
		return exitUsage
	}
	switch args[0] {
	case "tools":
		return runTools(ctx, args[1:], stdout, stderr)
	case "call":
		return runCall(ctx, args[1:], stdout, stderr)
	case "task":
		return runTask(ctx, args[1:], stdout, stderr)
	case "gateway":
		return runGateway(ctx, args[1:], stdout, stderr)
	case "check":
		return runCheck(ctx, args[1:], stdout, stderr)
	case "new":
		return runNew(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usageHeader)
		return exitOK
	}
	fmt.Fprintf(stderr, "agentura: unknown command %q: use tools, call, task, gateway, check or new\n\n%s", args[0], usageHeader)
	return exitUsage
}

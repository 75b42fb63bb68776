package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentura/agentura/contractcheck"
)

// checkUsage is the synopsis of `agentura check`.
const checkUsage = "agentura check [flags] <url>\n" +
	"       agentura check [flags] --stdio -- CMD [ARG]...\n\n" +
	"Drives any MCP server (in any language) and reports, point by point, what of the file contract\n" +
	"(docs/contract.md) it meets; the exit status is 1 when a point fails. It calls a tool that takes a\n" +
	"file with a small file it makes (--tool, --file and --args to choose). It fetches only from the server's\n" +
	"origin (--base-url, else the URL's) and the hosts of --allow-host, redirects included: a URL the server\n" +
	"names elsewhere is not fetched, and the point that needed it says so.\n\n" +
	"With --standard it judges the server by the draft MCP file contract alone, SEP-2631 at\n" +
	"modelcontextprotocol commit c3cf0eba (each point names its section): x-mcp-file declarations, files\n" +
	"sent inline and through files/authorizeUpload as each field's transferModes allow, FileValues in\n" +
	"results and file content blocks fetched with files/authorizeDownload, sizes and sha-256 digests,\n" +
	"expired descriptors and unknown file URIs refused; never /uploads nor a URL for the server to fetch.\n" +
	"The check declares the client capability files {upload, download, transports} (§2) either way."

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c common
	var tool, file, argsJSON, serveAddr, serveURL string
	var jsonOut, standard bool
	var expiryWait time.Duration
	var allowHosts listFlag
	fs := newFlagSet("check", checkUsage, stderr)
	c.register(fs)
	fs.StringVar(&tool, "tool", "", "the tool to call (default: up to three tools with a file parameter, preferring one that produces a file)")
	fs.StringVar(&file, "file", "", "a sample file to send (default: a small file of a type the parameter accepts)")
	fs.StringVar(&argsJSON, "args", "", "more arguments for the call, as a JSON object (@FILE reads it from FILE)")
	fs.StringVar(&serveAddr, "serve-addr", "127.0.0.1:0", "where the check serves the sample for the input by URL, when the server has no /uploads")
	fs.StringVar(&serveURL, "serve-url", "", "the base URL the server reaches that address by (default http://<serve-addr>)")
	fs.Var(&allowHosts, "allow-host", "a host (host or host:port) besides the server's own that the check may fetch from: "+
		"its downloads, the redirects of its URLs, its descriptors (repeatable)")
	fs.BoolVar(&jsonOut, "json", false, "print the report as JSON (for CI)")
	fs.BoolVar(&standard, "standard", false, "judge the server by the draft MCP file contract alone (SEP-2631 at c3cf0eba), not by agentura's")
	fs.DurationVar(&expiryWait, "expiry-wait", contractcheck.DefaultExpiryWait, "with --standard: how long to wait, at most, for an upload "+
		"descriptor to expire, to see an upload to it refused (0: do not wait)")
	rawURL, _, ok := c.parse(fs, args, nil, stderr)
	if !ok {
		return exitUsage
	}
	var extra map[string]any
	if argsJSON != "" {
		raw, err := readArgs(argsJSON)
		if err != nil {
			fmt.Fprintf(stderr, "agentura check: %v\n", strings.Replace(err.Error(), "--json", "--args", 1))
			return exitUsage
		}
		json.Unmarshal(raw, &extra)
	}
	if expiryWait <= 0 {
		expiryWait = -1 // contractcheck.Options.ExpiryWait: 0 is the default, so "do not wait" is negative
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	target := contractcheck.Target{URL: rawURL, Token: c.token, BaseURL: c.baseURL}
	if c.stdio {
		target.Command = c.command
		if c.verbose {
			target.Stderr = stderr
		}
	}
	if rawURL != "" {
		endpoint, err := endpointOf(rawURL)
		if err != nil {
			fmt.Fprintf(stderr, "agentura check: %v\n", err)
			return exitUsage
		}
		target.URL = endpoint
	}
	report := contractcheck.Run(ctx, target, contractcheck.Options{
		Tool: tool, SampleFile: file, Arguments: extra, ServeAddr: serveAddr, ServeURL: serveURL, AllowHosts: allowHosts,
		MaxMessageBytes: int64(c.maxMessage), Logger: stderrLogger(c.verbose, stderr),
		Standard: standard, ExpiryWait: expiryWait,
	})
	if jsonOut || c.output == "json" {
		printJSON(stdout, report)
	} else {
		report.WriteText(stdout)
	}
	if line := report.FailedLine(); line != "" {
		fmt.Fprintf(stderr, "agentura check: %s\n", line)
		return exitFailed
	}
	return exitOK
}

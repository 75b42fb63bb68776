package archtest

import (
	"slices"
	"strings"
)

// Leaves may be imported by both sides, server and client.
var Leaves = []string{"transfer", "transfer/mcpfile", "filetype", "filename", "settings"}

// agentcoreMay is what agentcore and the packages of its insides
// (agentcore/internal/...) may import.
var agentcoreMay = with(Leaves, "fileserve", "internal/lib/httpjson", "internal/lib/fault", "internal/lib/quota", "signing", "internal/lib/filehttp", "internal/lib/connlimit", "cleanup", "internal/lib/promreg", "internal/lib/memcg", "internal/lib/revocation", "internal/lib/boundedmap", "internal/lib/probe", "internal/lib/pdfpreview", "internal/lib/otelsetup", "internal/lib/mcptrace")

// agentMay is what an agent's packages (agents/...) may import, besides
// their own: agentcore, the leaves, and childproc, which every child process
// of an agent is started through.
var agentMay = with(Leaves, "agentcore", "internal/lib/childproc")

// Rule says which packages of this module the packages matched by Pkgs may
// import (in their non-test files; tests may start whatever they need), and
// what those packages are for. Paths are relative to the module; a pattern
// ending in "/..." matches that package and every package below it, any
// other pattern only itself. The first rule whose Pkgs matches a package is
// its rule: the narrow ones come first. Every package must have a rule, and
// every rule must match a package, so the table stays the picture of the
// tree; docs/architecture.md's package table is generated from it
// (go run ./internal/cmd/gendocs).
type Rule struct {
	Pkgs string   // a package path or a pattern ending in "/..."
	May  []string // the module's packages (or patterns) it may import
	Role string   // one line: what the package is for
}

// Rules is the import direction as a table: leaves import nothing of the
// module but filename and transfer/mcpfile; signing → fileserve →
// filehttp/cleanup → agentcore on the server side; client and the hosts on
// the leaves and transferclient (the host side's file moves) alone, no
// server internals, and no server package on transferclient; agents on
// agentcore, the leaves and childproc; agent mains on agentcore and their
// agent only.
var Rules = []Rule{
	// Leaves of both sides.
	{"transfer", []string{"transfer/mcpfile"}, "the transfer protocol both sides must agree on: JSON shapes, keywords, _meta keys, paths, headers, the origin rule, digests, data URIs, redaction"},
	{"transfer/mcpfile", nil, "the draft MCP file contract (SEP-2631 at c3cf0eba, as openai/codex speaks it), its one mapping: x-mcp-file, FileValue, descriptors, files/authorize*"},
	{"filetype", nil, "MIME detection from content and labels for people"},
	{"filename", nil, "display names: cleaning, limits, \" (2)\" numbering"},
	{"settings", nil, "each setting declared once: variable, flag, default, parser, doc line"},

	// The server side, each layer on the ones before it; its helpers under
	// internal/lib/ (code linked into what ships).
	{"signing", nil, "download tokens: JWT HS256 pinned, kid, rotation, owner + file id + area + expiry"},
	{"internal/lib/fault", nil, "a failure of the server's own as its caller is told of it: the cause in words and a reason code, the details for the log"},
	{"internal/lib/httpjson", []string{"transfer", "internal/lib/fault"}, "the JSON answers of the server's routes: the contract's error body, a failure's, any JSON value"},
	{"internal/lib/promreg", nil, "registers a Prometheus collector once for the server layers"},
	{"internal/lib/memcg", nil, "the cgroup memory limit the agent fits its heap to (GOMEMLIMIT)"},
	{"internal/lib/boundedmap", nil, "a size-capped map"},
	{"internal/lib/minipdf", nil, "small PDF files written from their objects: the contract check's sample, the preview tests' pages"},
	{"internal/lib/childproc", nil, "the child processes of agents (tesseract, pdftoppm): each in a process group of its own killed when its call ends, and killed with the agent (a parent-death signal, Linux); the last line of a failed one's stderr, which its errors quote (LastLine)"},
	{"internal/lib/pdfpreview/...", []string{"internal/lib/minipdf", "internal/lib/childproc"}, "a PDF's first page as a PNG: pdftoppm bounded in time, memory and number, a cache by bytes"},
	{"internal/lib/probe", []string{"transfer"}, "the readiness probe: one GET, no proxy, 200 or a clear error (--healthcheck, the S3 image)"},
	{"internal/lib/issuermeta", nil, "an OAuth issuer's metadata found and read (RFC 8414, OpenID Connect Discovery): the resource server's issuer, a2acall's token endpoint"},
	{"internal/lib/connlimit", nil, "caps on the connections a server holds open, per client address and in total"},
	{"internal/lib/otelsetup", nil, "the OpenTelemetry tracer and meter providers from the standard OTEL_* variables, each off unless asked for, flushed at stop"},
	{"internal/lib/mcptrace", []string{"transfer", "filename"}, "one trace across MCP processes: the W3C trace context in params._meta (SEP-414), server and client spans and operation durations by the MCP semantic conventions, file names in spans only when allowed"},
	{"fileserve", with(Leaves, "internal/lib/boundedmap"), "Store, the extension point: DiskStore, capabilities (Presigner, LocalRoot, RecordStore, ExpiryIndex), OpenStore by URL scheme with the settings each backend declares, the TTL wrapper"},
	{"fileserve/s3store", with(Leaves, "fileserve"), "the S3 store (minio-go); importing it registers s3://"},
	{"fileserve/storetest", []string{"fileserve"}, "the Store conformance suite every store passes"},
	{"fileserve/s3bench", nil, "benchmarks of S3 downloads against a presigned GET"},
	{"internal/lib/quota", []string{"fileserve"}, "the per-owner quota of a store: a wrapper refusing what would pass it, reservations of bytes on their way"},
	{"internal/lib/revocation", []string{"fileserve", "signing"}, "revoked URLs and deleted files, shared through the store's records"},
	{"internal/lib/filehttp", with(Leaves, "fileserve", "internal/lib/httpjson", "internal/lib/quota", "signing", "internal/lib/boundedmap", "internal/lib/promreg", "internal/lib/revocation", "internal/lib/pdfpreview", "internal/lib/connlimit", "internal/lib/mcptrace"), "GET/HEAD/DELETE /files/, POST /uploads, tus at /uploads/tus/ on a Store"},
	{"cleanup", []string{"fileserve", "internal/lib/promreg", "internal/lib/mcptrace"}, "the TTL sweeper: at start-up in the background, then on a cron schedule"},
	// agentcore's insides, out of the author's sight: each may import
	// what agentcore may, never agentcore itself.
	{"agentcore/internal/calls", with(Leaves, "fileserve", "internal/lib/filehttp"), "the bindings' shared vocabulary: a tool as they see it, a call's request and result, the hooks it reports through, the caller's file scope"},
	{"agentcore/internal/ops", with(Leaves, "fileserve", "internal/lib/quota", "signing", "internal/lib/httpjson", "internal/lib/connlimit", "internal/lib/filehttp", "internal/lib/memcg", "internal/lib/probe", "internal/lib/promreg"), "what an operator runs the agent by: call slots, the owner quota and work meter, connection caps, /readyz, --healthcheck, the memory limit, their metrics"},
	{"agentcore/internal/transport", with(Leaves, "fileserve", "internal/lib/fault", "internal/lib/quota", "signing", "agentcore/internal/calls", "agentcore/internal/urlfetch", "internal/lib/filehttp", "internal/lib/httpjson", "internal/lib/mcptrace"), "each way a file travels, one Transport each, in one list the resolver, the schema and the response builder iterate: data URIs, URLs, the draft's file URIs, paths, base64; the inline pass; the draft's upload descriptors"},
	{"agentcore/internal/tasks", with(Leaves, "fileserve", "internal/lib/fault", "internal/lib/quota", "agentcore/internal/calls", "internal/lib/mcptrace"), "the one task engine of MCP and A2A: leases, cancel markers and charges of every task (the ledger), MCP task records, A2A task stores (shared and in memory)"},
	{"agentcore/internal/callfiles", with(Leaves, "fileserve"), "each call's work folder, per process under a lock, and the journal that makes a response's outputs one commit"},
	{"agentcore/internal/a2abind", with(Leaves, "fileserve", "internal/lib/fault", "internal/lib/httpjson", "internal/lib/promreg", "agentcore/internal/calls", "agentcore/internal/callers", "agentcore/internal/httpguard", "agentcore/internal/tasks", "agentcore/internal/transport", "internal/lib/mcptrace"), "the A2A binding: /a2a's JSON-RPC (a2a-go), the agent card, a message's skill run as a tool call, file parts in, artifacts out"},
	{"agentcore/internal/mcpbind", with(Leaves, "fileserve", "internal/lib/fault", "internal/lib/quota", "signing", "internal/lib/filehttp", "agentcore/internal/calls", "agentcore/internal/callers", "agentcore/internal/httpguard", "agentcore/internal/tasks", "agentcore/internal/transport", "agentcore/internal/apps", "internal/lib/httpjson", "internal/lib/mcptrace"), "the MCP binding: every revision on one /mcp, discover and capabilities, tools, produced files as resources, progress, logging, cancellation, MCP tasks on both revisions, files/authorize*, anonymous callers' owner scopes"},
	{"agentcore/internal/apps", with(Leaves, "fileserve", "signing", "agentcore/internal/calls", "agentcore/internal/callers", "agentcore/internal/httpguard", "internal/lib/httpjson"), "the MCP Apps views: ui:// resources, each tool's _meta.ui, the upload view's capability and its tus requests"},
	{"agentcore/internal/callers", with(Leaves, "agentcore/internal/calls", "agentcore/internal/httpguard", "agentcore/internal/oauthrs", "agentcore/internal/urlfetch", "internal/lib/httpjson"), "who calls: the bearer check of AGENT_AUTH=jwt and oauth, the owner a request acts for, scopes and their challenges, the protected-resource metadata"},
	{"agentcore/internal/httpguard", with(Leaves, "internal/lib/httpjson", "internal/lib/mcptrace"), "the HTTP hardening in front of the handlers: origin and DNS-rebinding guard, /mcp body guard, the strict read of a JSON-RPC body (one method, each member once), slow bodies, rate limit, trusted proxies, request ids"},
	{"agentcore/internal/urlfetch", agentcoreMay, "the SSRF-guarded fetcher of URL inputs: public addresses only, allowed hosts, peers' internal bases (AGENT_PEER_URLS)"},
	{"agentcore/internal/oauthrs", with(agentcoreMay, "agentcore/internal/urlfetch", "internal/lib/issuermeta"), "the agent as an OAuth 2.1 resource server (AGENT_AUTH=oauth): issuer discovery, JWKS, JWT and introspected tokens"},
	{"agentcore", with(agentcoreMay, "agentcore/internal/..."), "the agent author's framework: Service, Tool, Call, FileAttachment, the resolver, FileResponse, MCP (every revision), A2A, tasks, auth, Main"},
	{"agentcore/agenttest", with(Leaves, "agentcore", "client"), "the public test helper: an agent in-process, the host side in front"},

	// The client side: the leaves and transferclient, never a server
	// package (issuermeta, which reads an issuer's metadata, is neither
	// side's). agentcore may not import a2acall (the A2A client), so agents
	// calling no peer do not link it.
	{"transferclient", []string{"transfer", "transfer/mcpfile", "filename"}, "the host side's file moves: uploads (raw and tus), guarded downloads, saving whole or not at all, delete and revoke, the bearer transport"},
	{"client", with(Leaves, "transferclient", "internal/lib/mcptrace"), "the host side: registry of names, the go-sdk sending middleware, uploads, downloads, sign-in, tasks"},
	{"a2acall", with(Leaves, "transferclient", "internal/lib/issuermeta"), "the A2A client: another agent's skill called with local files, files back as local files"},
	// The gateway is a host: the client package (and a2acall for A2A
	// agents), never a server package.
	{"gateway", with(Leaves, "transferclient", "client", "a2acall", "internal/lib/mcptrace"), "an MCP server fronting agents, MCP or A2A, for any chat host: names in, files saved out"},
	// The contract check is a host too: it drives any MCP server.
	{"contractcheck", with(Leaves, "transferclient", "client", "internal/lib/minipdf"), "agentura check: what of the file contract any MCP server meets, point by point; --standard: of SEP-2631 (c3cf0eba) alone"},
	{"cmd/agentura", with(Leaves, "transferclient", "client", "gateway", "contractcheck", "internal/lib/otelsetup"), "the CLI: tools, call, task, gateway, check, new"},

	// Agents know only agentcore and the leaves (and their own sub-packages),
	// and start their child processes through internal/lib/childproc; their
	// mains are thin: agentcore, the agent and the S3 store's scheme.
	{"agents/ocr/internal/ocrtest", []string{"internal/testkit/requiretool", "internal/testkit/procgroup"}, "the OCR tests' inputs"},
	{"agents/ocr/...", with(agentMay, "agents/ocr/..."), "the OCR agent: tesseract and pdftoppm behind ocr_document and ocr_batch"},
	{"agents/composer/...", with(agentMay, "agents/composer/..."), "the document composer: Markdown to PDF, DOCX, PPTX, HTML, Markdown; merge_pdfs"},
	{"cmd/ocr-agent", []string{"agentcore", "agents/ocr", "fileserve/s3store"}, "the OCR agent's main"},
	{"cmd/composer-agent", []string{"agentcore", "agents/composer", "fileserve/s3store"}, "the composer's main"},
	{"examples/...", with(Leaves, "agentcore", "a2acall", "fileserve/s3store", "examples/..."), "the example agent and an agent calling another over A2A"},

	// Deployment checks: no code of the module.
	{"deploy/...", nil, "Dockerfiles and compose files; deploy/e2e tests them on the engine"},

	// Test harnesses under internal/testkit/: only tests import them (and
	// each other); no shipped package may.
	{"internal/testkit/testagent/cmd/testagent", []string{"agentcore", "internal/testkit/testagent"}, "tests: the test agent as a binary"},
	{"internal/testkit/testagent", with(Leaves, "agentcore", "examples/fileagent"), "tests: a real agent in the test process"},
	{"internal/testkit/procgroup", nil, "tests: their processes in a group of their own, killed with the test binary"},
	{"internal/testkit/s3test", []string{"internal/testkit/requiretool", "internal/testkit/procgroup"}, "tests: versitygw started for a test"},
	{"internal/testkit/hydratest", []string{"internal/tools/demologin", "internal/testkit/requiretool", "internal/testkit/procgroup", "agentcore", "examples/fileagent"}, "tests: a real identity provider (Ory Hydra)"},
	{"internal/testkit/mcptest", with(Leaves, "internal/testkit/procgroup"), "tests: build an agent, start it, call it with an independent MCP client"},
	{"internal/testkit/chromiumtest", []string{"internal/testkit/procgroup", "internal/testkit/requiretool"}, "tests: headless Chromium driven with chromedp, which enforces a page's Content-Security-Policy"},
	{"internal/testkit/memcgtest", []string{"internal/lib/memcg"}, "tests: a child process in a memory cgroup of its own, its peak use and OOM kills"},
	{"internal/testkit/limitstest", nil, "tests: the limits of a built agent"},
	{"internal/testkit/drafttest", nil, "tests: a third-party MCP server that speaks only the draft file contract (SEP-2631), none of agentura's packages, with switches that break it one point at a time"},
	{"internal/testkit/outage", nil, "tests: an HTTP server a test takes down and brings back on its port, or makes hang, fail or garble: a dependency's outage"},
	{"internal/testkit/untrusted", nil, "tests: an MCP server one does not trust yet, naming URLs on a second service that records every request (agentura check), none of agentura's packages"},
	{"internal/testkit/...", nil, "tests: attack catalogue and fault tests, hostile inputs, MCP Apps in a browser, A2A helpers, a third-party MCP server, heap sampling, required tools, an OTLP collector"},

	// Tools under internal/cmd/ (binaries: make targets, the demo and S3
	// images' helpers) and internal/tools/ (their libraries).
	{"internal/tools/demologin", nil, "the demo login and consent pages of the demo identity provider"},
	{"internal/cmd/demologin", []string{"internal/tools/demologin"}, "the demo login as a binary (make up-auth)"},
	{"internal/cmd/httpprobe", []string{"internal/lib/probe"}, "the S3 and Hydra images' health check"},
	{"internal/cmd/freeport", nil, "deploy/e2e.sh: free loopback ports for the ports the deployment tests publish"},
	{"internal/cmd/benchagent", with(Leaves, "agentcore"), "make bench-nginx: the file service alone"},
	{"internal/cmd/gendocs", with(Leaves, "agentcore", "agents/ocr", "agents/composer", "fileserve", "fileserve/s3store", "internal/tools/archtest"), "the settings tables, deploy/.env.example and this package table, from their declarations"},
	{"internal/tools/archtest", nil, "this table, and the test that holds the imports to it"},
	{"internal/cmd/...", nil, "tools: the bench report (make bench), the scale-out load driver"},
}

// with returns list followed by more, in a new slice.
func with(list []string, more ...string) []string {
	return append(slices.Clip(list), more...)
}

// Match reports whether the module-relative package path pkg matches pattern.
func Match(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	return pkg == pattern
}

// Markdown is the rule table as a Markdown table: package, what it is,
// what of the module it may import.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| Package | What it is | May import (of this module) |\n|---|---|---|\n")
	for _, r := range Rules {
		may := "—"
		if len(r.May) > 0 {
			may = "`" + strings.Join(r.May, "`, `") + "`"
		}
		b.WriteString("| `" + r.Pkgs + "` | " + r.Role + " | " + may + " |\n")
	}
	return b.String()
}

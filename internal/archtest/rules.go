package archtest

import (
	"slices"
	"strings"
)

// Leaves may be imported by both sides, server and client.
var Leaves = []string{"transfer", "transfer/mcpfile", "filetype", "filename", "settings"}

// agentcoreMay is what agentcore and the packages of its insides
// (agentcore/internal/...) may import.
var agentcoreMay = with(Leaves, "fileserve", "internal/signing", "internal/filehttp", "internal/connlimit", "internal/cleanup", "internal/promreg", "internal/memcg", "internal/revocation", "internal/boundedmap")

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
// module but filename; signing → fileserve → filehttp/cleanup → agentcore
// on the server side; client and the hosts on the leaves alone (no server
// internals); agents on agentcore and the leaves; agent mains on agentcore
// and their agent only.
var Rules = []Rule{
	// Leaves of both sides.
	{"transfer", []string{"filename", "transfer/mcpfile"}, "the transfer protocol both sides speak: JSON shapes, names, uploads (raw and tus), guarded downloads, saving whole or not at all, the origin rule"},
	{"transfer/mcpfile", nil, "the draft MCP file contract (SEP-2631 at c3cf0eba, as openai/codex speaks it), its one mapping: x-mcp-file, FileValue, descriptors, files/authorize*"},
	{"filetype", nil, "MIME detection from content and labels for people"},
	{"filename", nil, "display names: cleaning, limits, \" (2)\" numbering"},
	{"settings", nil, "each setting declared once: variable, flag, default, parser, doc line"},

	// The server side, each layer on the ones before it.
	{"internal/signing", nil, "download tokens: JWT HS256 pinned, kid, rotation, owner + file id + area + expiry"},
	{"internal/promreg", nil, "registers a Prometheus collector once for the server layers"},
	{"internal/memcg", nil, "the cgroup memory limit (GOMEMLIMIT) and a child's peak in a memory cgroup"},
	{"internal/boundedmap", nil, "a size-capped map"},
	{"internal/connlimit", nil, "caps on the connections a server holds open, per client address and in total"},
	{"fileserve", with(Leaves, "internal/boundedmap"), "Store, the extension point: DiskStore, capabilities (Presigner, LocalRoot, RecordStore, ExpiryIndex), OpenStore by URL scheme, the quota and TTL wrappers"},
	{"fileserve/s3store", with(Leaves, "fileserve"), "the S3 store (minio-go); importing it registers s3://"},
	{"fileserve/storetest", []string{"fileserve"}, "the Store conformance suite every store passes"},
	{"fileserve/s3bench", nil, "benchmarks of S3 downloads against a presigned GET"},
	{"internal/revocation", []string{"fileserve", "internal/signing"}, "revoked URLs and deleted files, shared through the store's records"},
	{"internal/filehttp", with(Leaves, "fileserve", "internal/signing", "internal/boundedmap", "internal/promreg", "internal/revocation"), "GET/HEAD/DELETE /files/, POST /uploads, tus at /uploads/tus/ on a Store"},
	{"internal/cleanup", []string{"fileserve", "internal/promreg"}, "the TTL sweeper: at start-up in the background, then on a cron schedule"},
	// agentcore's insides, out of the author's sight: each may import
	// what agentcore may, never agentcore itself.
	{"agentcore/internal/httpguard", agentcoreMay, "the HTTP hardening in front of the handlers: origin and DNS-rebinding guard, /mcp body guard, slow bodies, rate limit, trusted proxies, request ids"},
	{"agentcore/internal/urlfetch", agentcoreMay, "the SSRF-guarded fetcher of URL inputs: public addresses only, allowed hosts, peers' internal bases (AGENT_PEER_URLS)"},
	{"agentcore/internal/oauthrs", with(agentcoreMay, "agentcore/internal/urlfetch"), "the agent as an OAuth 2.1 resource server (AGENT_AUTH=oauth): issuer discovery, JWKS, JWT and introspected tokens"},
	{"agentcore", with(agentcoreMay, "agentcore/internal/..."), "the agent author's framework: Service, Tool, Call, FileAttachment, the resolver, FileResponse, MCP (every revision), A2A, tasks, auth, Main"},
	{"agentcore/agenttest", with(Leaves, "agentcore", "client"), "the public test helper: an agent in-process, the host side in front"},

	// The client side: the leaves, never a server package. agentcore may
	// not import a2acall (the A2A client), so agents calling no peer do not
	// link it.
	{"client", Leaves, "the host side: registry of names, the go-sdk sending middleware, uploads, downloads, sign-in, tasks"},
	{"a2acall", Leaves, "the A2A client: another agent's skill called with local files, files back as local files"},
	// The gateway is a host: the client package, never a server package.
	{"gateway", with(Leaves, "client"), "an MCP server fronting agents for any chat host: names in, files saved out"},
	// The contract check is a host too: it drives any MCP server.
	{"contractcheck", with(Leaves, "client"), "agentura check: what of the file contract any MCP server meets, point by point"},
	{"cmd/agentura", with(Leaves, "client", "gateway", "contractcheck"), "the CLI: tools, call, task, gateway, check, new"},

	// Agents know only agentcore and the leaves (and their own sub-packages);
	// their mains are thin: agentcore, the agent and the S3 store's scheme.
	{"agents/ocr/internal/ocrtest", []string{"internal/requiretool", "internal/procgroup"}, "the OCR tests' inputs"},
	{"agents/ocr/...", with(Leaves, "agentcore", "agents/ocr/..."), "the OCR agent: tesseract and pdftoppm behind ocr_document and ocr_batch"},
	{"agents/composer/...", with(Leaves, "agentcore", "agents/composer/..."), "the document composer: Markdown to PDF, DOCX, PPTX, HTML, Markdown; merge_pdfs"},
	{"cmd/ocr-agent", []string{"agentcore", "agents/ocr", "fileserve/s3store"}, "the OCR agent's main"},
	{"cmd/composer-agent", []string{"agentcore", "agents/composer", "fileserve/s3store"}, "the composer's main"},
	{"examples/...", with(Leaves, "agentcore", "a2acall", "fileserve/s3store", "examples/..."), "the example agent and an agent calling another over A2A"},

	// Deployment checks: no code of the module.
	{"deploy/...", nil, "Dockerfiles and compose files; deploy/e2e tests them on the engine"},

	// Test helpers under internal/: only tests import them.
	{"internal/testagent/cmd/testagent", []string{"agentcore", "internal/testagent"}, "tests: the test agent as a binary"},
	{"internal/testagent", with(Leaves, "agentcore", "examples/fileagent"), "tests: a real agent in the test process"},
	{"internal/procgroup", nil, "tests: their processes in a group of their own, killed with the test binary"},
	{"internal/s3test", []string{"internal/requiretool", "internal/procgroup"}, "tests: versitygw started for a test"},
	{"internal/hydratest", []string{"internal/demologin", "internal/requiretool", "internal/procgroup", "agentcore", "examples/fileagent"}, "tests: a real identity provider (Ory Hydra)"},
	{"internal/demologin", nil, "the demo login and consent pages of that provider"},
	{"internal/cmd/demologin", []string{"internal/demologin"}, "the demo login as a binary (make up-auth)"},
	{"internal/mcptest", with(Leaves, "internal/procgroup"), "tests: build an agent, start it, call it with an independent MCP client"},
	{"internal/limitstest", nil, "tests: the limits of a built agent"},
	{"internal/cmd/httpprobe", Leaves, "the S3 image's health check"},
	{"internal/cmd/benchagent", with(Leaves, "agentcore"), "make bench-nginx: the file service alone"},
	{"internal/cmd/gendocs", with(Leaves, "agentcore", "agents/ocr", "agents/composer", "internal/archtest"), "the settings tables, deploy/.env.example and this package table, from their declarations"},
	{"internal/archtest", nil, "this table, and the test that holds the imports to it"},
	{"internal/...", nil, "test harnesses and tools: attack catalogue, fault tests, bench report, heap sampling"},
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

package contractcheck

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Status is the outcome of one point.
type Status string

// The outcomes of a point.
const (
	// Pass: the server meets the point.
	Pass Status = "pass"
	// Fail: it does not; the detail says how.
	Fail Status = "fail"
	// Skip: the point could not be checked (nothing to check it on, or an
	// earlier point failed); the detail says why.
	Skip Status = "skip"
	// NotOffered: an optional part of the contract the server does not
	// offer. Not a failure.
	NotOffered Status = "not offered"
)

// The points, in the order they are checked.
const (
	PointConnect      = "connect"          // an MCP session (the newest revision both speak)
	PointTools        = "tools"            // tools/list
	PointFileParams   = "file-params"      // file parameters marked x-file / x-mcp-file
	PointMCPFile      = "x-mcp-file"       // the draft's x-mcp-file object well formed
	PointInline       = "input-inline"     // a file sent as a data: URI resolved
	PointUploads      = "uploads"          // POST /uploads stages a file (optional)
	PointURL          = "input-url"        // a file sent by URL resolved
	PointOutputFields = "output-fields"    // download_url, filename, mime_type, size_bytes, sha256
	PointOutputLinks  = "output-links"     // a resource_link per produced file
	PointDownload     = "download"         // the URL serves the announced bytes
	PointHeaders      = "download-headers" // Content-Disposition: attachment, nosniff, the type
	PointToken        = "token"            // a tampered or missing token is refused
	PointFileTransfer = "file-transfer"    // files/authorizeUpload, files/authorizeDownload (optional)
)

// The points of the standard check (Options.Standard) beside connect,
// tools, x-mcp-file, input-inline and download, which it reports under
// titles of its own (standardPoints).
const (
	PointUpload       = "upload"        // files/authorizeUpload answered, its descriptor taking the bytes
	PointInputUpload  = "input-upload"  // an uploaded file's URI accepted by a tool
	PointUploadDigest = "upload-digest" // bytes that miss the declared digest refused
	PointUploadExpiry = "upload-expiry" // an upload to an expired descriptor refused
	PointOutputs      = "outputs"       // FileValues in structured content or file content blocks
	PointSize         = "size"          // downloads of the stated size
	PointDigest       = "digest"        // downloads of the stated digest
	PointUnknownFile  = "unknown-file"  // an unknown file URI refused
)

// StandardRevision names what the standard check judges by: SEP-2631 "File
// Objects and Transfer" as pinned at modelcontextprotocol/modelcontextprotocol
// commit c3cf0ebae28c86fc09c1f1db46e5e558911376bb, the draft
// transfer/mcpfile maps.
const StandardRevision = "SEP-2631 at modelcontextprotocol c3cf0eba"

// standardPoint is a point of the standard check: what it checks, and the
// section of SEP-2631 that asks it.
type standardPoint struct{ title, section string }

// standardPoints are the standard check's points, in the order reported.
var standardPoints = []struct {
	id string
	standardPoint
}{
	{PointConnect, standardPoint{"an MCP session, the client declaring files", "§2"}},
	{PointTools, standardPoint{"tools listed", ""}},
	{PointMCPFile, standardPoint{"file inputs: x-mcp-file on URI string properties, a FileInputDescriptor", "§5"}},
	{PointInline, standardPoint{"a file sent inline as a data: URI accepted, where transferModes allow it", "§4, §5"}},
	{PointUpload, standardPoint{"files/authorizeUpload: a file URI and a descriptor that takes the bytes", "§6"}},
	{PointInputUpload, standardPoint{"the uploaded file's URI accepted in tools/call, where transferModes allow it", "§4, §7"}},
	{PointUploadDigest, standardPoint{"an upload whose bytes miss the declared digest refused", "§6"}},
	{PointUploadExpiry, standardPoint{"an upload to an expired descriptor refused", "§6, Security Implications"}},
	{PointOutputs, standardPoint{"produced files: FileValues in structuredContent or file content blocks", "§4, §8"}},
	{PointDownload, standardPoint{"files/authorizeDownload of each produced file, its descriptor followed", "§8"}},
	{PointSize, standardPoint{"the bytes received are as many as the size stated", "§8"}},
	{PointDigest, standardPoint{"the bytes received hash to the digest stated (sha-256, base64url without padding)", "§4, §8"}},
	{PointUnknownFile, standardPoint{"an unknown file URI refused with a JSON-RPC error", "§8, §10"}},
}

// titles say what each point checks, for the table.
var titles = map[string]string{
	PointConnect:      "an MCP session",
	PointTools:        "tools listed",
	PointFileParams:   "file parameters marked (x-file, x-mcp-file)",
	PointMCPFile:      "x-mcp-file objects well formed",
	PointInline:       "a file sent inline (data: URI) resolved",
	PointUploads:      "POST /uploads stages a file",
	PointURL:          "a file sent by URL resolved",
	PointOutputFields: "outputs: download_url, filename, mime_type, size_bytes, sha256",
	PointOutputLinks:  "outputs: a resource_link per file",
	PointDownload:     "links download the announced bytes (size, sha256)",
	PointHeaders:      "downloads: attachment, nosniff, the announced type",
	PointToken:        "a tampered or missing token is refused (expiry)",
	PointFileTransfer: "files/authorizeUpload, files/authorizeDownload",
}

// Point is one checked point of the contract.
type Point struct {
	// ID names the point ("input-url"): stable, for scripts.
	ID string `json:"id"`
	// Title says what it checks.
	Title string `json:"title"`
	// Section is the section of SEP-2631 the point checks, in a standard
	// check ("§8").
	Section string `json:"section,omitempty"`
	// Status is its outcome.
	Status Status `json:"status"`
	// Detail says what was seen: why it failed, what passed.
	Detail string `json:"detail,omitempty"`
}

// Report is what a check found.
type Report struct {
	// Target is the URL or command checked.
	Target string `json:"target"`
	// Standard names the text the server was judged by in a standard check
	// (StandardRevision); empty for agentura's contract.
	Standard string `json:"standard,omitempty"`
	// Server is the server's name and version, as it gives them.
	Server string `json:"server,omitempty"`
	// Protocol is the MCP revision the session speaks.
	Protocol string `json:"protocol,omitempty"`
	// Tool and Parameter are the tool called and the file parameter given
	// the sample; Sample describes the sample.
	Tool      string `json:"tool,omitempty"`
	Parameter string `json:"parameter,omitempty"`
	Sample    string `json:"sample,omitempty"`
	// Points are the points in the order checked.
	Points []Point `json:"points"`
}

// add appends a point.
func (r *Report) add(id string, s Status, detail string, args ...any) {
	if len(args) > 0 {
		detail = fmt.Sprintf(detail, args...)
	}
	p := Point{ID: id, Title: titles[id], Status: s, Detail: detail}
	if r.Standard != "" {
		for _, sp := range standardPoints {
			if sp.id == id {
				p.Title, p.Section = sp.title, sp.section
			}
		}
	}
	r.Points = append(r.Points, p)
}

// verdict reports point id failed with the lines of bad when there are
// any, else passed with those of good.
func (r *Report) verdict(id string, bad, good []string) {
	if len(bad) > 0 {
		r.add(id, Fail, "%s", strings.Join(bad, "\n"))
		return
	}
	r.add(id, Pass, "%s", strings.Join(good, "\n"))
}

// verdictOr is verdict, but reports point id with status none and the
// detail why when there are no lines of bad nor of good.
func (r *Report) verdictOr(id string, bad, good []string, none Status, why string) {
	if len(bad) == 0 && len(good) == 0 {
		r.add(id, none, "%s", why)
		return
	}
	r.verdict(id, bad, good)
}

// sortStandard puts the points of a standard check in the order of
// standardPoints (it checks some in another order: the one that waits for
// a descriptor to expire last).
func (r *Report) sortStandard() {
	rank := map[string]int{}
	for i, sp := range standardPoints {
		rank[sp.id] = i
	}
	slices.SortStableFunc(r.Points, func(a, b Point) int { return rank[a.ID] - rank[b.ID] })
}

// Point returns the point id, and whether it was checked.
func (r *Report) Point(id string) (Point, bool) {
	for _, p := range r.Points {
		if p.ID == id {
			return p, true
		}
	}
	return Point{}, false
}

// Failed lists the ids of the points that failed.
func (r *Report) Failed() []string {
	var out []string
	for _, p := range r.Points {
		if p.Status == Fail {
			out = append(out, p.ID)
		}
	}
	return out
}

// FailedLine says which points failed, "1 point failed: digest" or "2
// points failed: output-links, download"; "" when none did.
func (r *Report) FailedLine() string {
	failed := r.Failed()
	if len(failed) == 0 {
		return ""
	}
	return fmt.Sprintf("%s failed: %s", count(len(failed), "point"), strings.Join(failed, ", "))
}

// WriteText writes the report as a table a person reads.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "agentura check %s", r.Target)
	if r.Server != "" {
		fmt.Fprintf(&b, ": %s, MCP %s", r.Server, r.Protocol)
	}
	b.WriteString("\n")
	if r.Standard != "" {
		fmt.Fprintf(&b, "judged by the draft MCP file contract alone: %s\n", r.Standard)
	}
	if r.Tool != "" {
		fmt.Fprintf(&b, "called %s with %s as %s\n", r.Tool, r.Sample, r.Parameter)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	counts := map[Status]int{}
	for _, p := range r.Points {
		counts[p.Status]++
		title := p.Title
		if p.Section != "" {
			title += " (" + p.Section + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", strings.ToUpper(string(p.Status)), p.ID, title)
		if p.Detail != "" {
			for _, line := range strings.Split(p.Detail, "\n") {
				fmt.Fprintf(tw, "  \t\t  %s\n", line)
			}
		}
	}
	tw.Flush()
	fmt.Fprintf(&b, "\n%s\n", summary(len(r.Points), counts))
	_, err := io.WriteString(w, b.String())
	return err
}

// summary is the report's last line: how many points passed and failed,
// then the skipped and not offered ones when there are any, e.g.
// "13 points: 11 passed, 0 failed, 2 not offered (optional)".
func summary(n int, counts map[Status]int) string {
	line := fmt.Sprintf("%s: %d passed, %d failed", count(n, "point"), counts[Pass], counts[Fail])
	if k := counts[Skip]; k > 0 {
		line += fmt.Sprintf(", %d skipped", k)
	}
	if k := counts[NotOffered]; k > 0 {
		line += fmt.Sprintf(", %d not offered (optional)", k)
	}
	return line
}

package contractcheck

import (
	"fmt"
	"io"
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
	// Status is its outcome.
	Status Status `json:"status"`
	// Detail says what was seen: why it failed, what passed.
	Detail string `json:"detail,omitempty"`
}

// Report is what a check found.
type Report struct {
	// Target is the URL or command checked.
	Target string `json:"target"`
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
	r.Points = append(r.Points, Point{ID: id, Title: titles[id], Status: s, Detail: detail})
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

// WriteText writes the report as a table a person reads.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "agentura check %s", r.Target)
	if r.Server != "" {
		fmt.Fprintf(&b, ": %s, MCP %s", r.Server, r.Protocol)
	}
	b.WriteString("\n")
	if r.Tool != "" {
		fmt.Fprintf(&b, "called %s with %s as %s\n", r.Tool, r.Sample, r.Parameter)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	counts := map[Status]int{}
	for _, p := range r.Points {
		counts[p.Status]++
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", strings.ToUpper(string(p.Status)), p.ID, p.Title)
		if p.Detail != "" {
			for _, line := range strings.Split(p.Detail, "\n") {
				fmt.Fprintf(tw, "  \t\t  %s\n", line)
			}
		}
	}
	tw.Flush()
	fmt.Fprintf(&b, "\n%d points: %d pass, %d fail, %d skipped, %d not offered\n",
		len(r.Points), counts[Pass], counts[Fail], counts[Skip], counts[NotOffered])
	_, err := io.WriteString(w, b.String())
	return err
}

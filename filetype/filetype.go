// Package filetype names the type of a file from its content and its name, and
// describes files the way a person (or a language model) reads them:
// "invoice.pdf (PDF, 240 KB)".
//
// It is a leaf package shared by the server side (fileserve, agentcore) and the
// client side (client): both must agree on what a file is called.
package filetype

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"mime"
	"os"
	"path"
	"strings"

	"github.com/gabriel-vasile/mimetype"
)

// SniffBytes is how much of a file is read to detect its type. Office formats
// are zip archives whose telling entries may lie well past the first 3 KiB
// that mimetype reads by default; 1 MiB tells docx, xlsx and pptx from zip
// (see officeType).
const SniffBytes = 1 << 20

// Generic is the type of content nothing more specific is known about.
const Generic = "application/octet-stream"

// byExtension holds types that the standard library's table lacks on a
// minimal system (no /etc/mime.types), so results do not depend on the host.
var byExtension = map[string]string{
	".pdf":  "application/pdf",
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".gif":  "image/gif",
	".webp": "image/webp",
	".svg":  "image/svg+xml",
	".tif":  "image/tiff",
	".tiff": "image/tiff",
	".bmp":  "image/bmp",
	".txt":  "text/plain; charset=utf-8",
	".md":   "text/markdown; charset=utf-8",
	".csv":  "text/csv; charset=utf-8",
	".tsv":  "text/tab-separated-values; charset=utf-8",
	".html": "text/html; charset=utf-8",
	".htm":  "text/html; charset=utf-8",
	".hocr": "text/vnd.hocr+html; charset=utf-8",
	".json": "application/json",
	".xml":  "application/xml",
	".zip":  "application/zip",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".odt":  "application/vnd.oasis.opendocument.text",
	".mp3":  "audio/mpeg",
	".wav":  "audio/wav",
	".mp4":  "video/mp4",
}

// ByName returns the type implied by name's extension, or "" if none is known.
func ByName(name string) string {
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/")))
	if t, ok := byExtension[ext]; ok {
		return t
	}
	return mime.TypeByExtension(ext)
}

// Detect returns the MIME type of content head (the first SniffBytes or fewer
// bytes of a file) called name. Content decides; the extension refines a
// generic answer (zip → docx, text → markdown). It never returns "".
func Detect(head []byte, name string) string {
	// mimetype reads its own (global) limit of the head, 3 KiB unless a
	// program changes it; this package leaves that global alone and looks
	// further into a zip itself.
	sniffed := mimetype.Detect(head)
	if sniffed.Is("application/zip") {
		if t := officeType(head); t != "" {
			return t
		}
	}
	return decide(sniffed, name, len(head) == 0)
}

// officeParts maps the folder of an Office Open XML package's main part to
// the package's type.
var officeParts = map[string]string{
	"word/": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"xl/":   "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"ppt/":  "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}

// officeType names the Office Open XML type of the zip archive whose first
// bytes are head, from the member names in its local file headers, or
// returns "" when head shows none of word/, xl/ or ppt/. A package opens
// with one of its package parts ([Content_Types].xml, _rels/.rels or
// docProps/); the main part may follow a large thumbnail, which is why the
// whole head is read.
func officeType(head []byte) string {
	sig := []byte("PK\x03\x04")
	for i, first := 0, true; ; first = false {
		j := bytes.Index(head[i:], sig)
		if j < 0 {
			return ""
		}
		h := head[i+j:]
		if len(h) < 30 {
			return ""
		}
		n := int(binary.LittleEndian.Uint16(h[26:28]))
		if len(h) < 30+n {
			return ""
		}
		name := string(h[30 : 30+n])
		if first && name != "[Content_Types].xml" && name != "_rels/.rels" && !strings.HasPrefix(name, "docProps/") {
			return ""
		}
		if folder, _, ok := strings.Cut(name, "/"); ok && officeParts[folder+"/"] != "" {
			return officeParts[folder+"/"]
		}
		i += j + 30 + n
	}
}

// DetectReader reads up to SniffBytes from r and detects the type as Detect does.
func DetectReader(r io.Reader, name string) (string, error) {
	head, err := io.ReadAll(io.LimitReader(r, SniffBytes))
	if err != nil {
		return "", fmt.Errorf("read file head: %w", err)
	}
	return Detect(head, name), nil
}

// DetectFile detects the type of the file at path, called name.
func DetectFile(path, name string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return DetectReader(f, name)
}

func decide(sniffed *mimetype.MIME, name string, empty bool) string {
	byName := ByName(name)
	if empty {
		return cmp.Or(byName, Generic)
	}
	base, _, _ := mime.ParseMediaType(sniffed.String())
	if byName != "" && compatible(base, byName) {
		return byName
	}
	return sniffed.String()
}

// compatible reports whether a file sniffed as sniffed may truthfully carry
// the type byName claims. Only the containers, sniffed types that say
// little, may: a zip may be a docx, plain text may be Markdown or CSV — and
// text that looks like CSV (a comma or two on every line) may be plain
// notes. For them the extension decides, when it names a type of the same
// family.
func compatible(sniffed, byName string) bool {
	nameBase, _, _ := mime.ParseMediaType(byName)
	switch sniffed {
	case "application/octet-stream":
		return true
	case "application/zip":
		return strings.HasPrefix(nameBase, "application/vnd.openxmlformats") ||
			strings.HasPrefix(nameBase, "application/vnd.oasis") || nameBase == "application/zip" ||
			nameBase == "application/epub+zip" || nameBase == "application/java-archive"
	case "application/x-ole-storage":
		return strings.HasPrefix(nameBase, "application/vnd.ms-") || nameBase == "application/msword"
	case "text/csv", "text/tab-separated-values":
		return strings.HasPrefix(nameBase, "text/")
	case "text/plain", "text/xml", "application/xml", "text/html":
		return strings.HasPrefix(nameBase, "text/") || strings.HasSuffix(nameBase, "json") ||
			strings.HasSuffix(nameBase, "xml") || strings.HasSuffix(nameBase, "+html")
	}
	return false
}

// Label is a short human name of a MIME type: "PDF", "PowerPoint", "PNG image".
func Label(mimeType string) string {
	base, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		base = mimeType
	}
	if l, ok := labels[base]; ok {
		return l
	}
	major, minor, _ := strings.Cut(base, "/")
	minor = strings.TrimPrefix(minor, "x-")
	if minor != "" { // malformed types such as "text" or "text/" have none
		switch major {
		case "image", "audio", "video":
			return strings.ToUpper(minor) + " " + major
		case "text":
			return strings.ToUpper(minor[:1]) + minor[1:] + " text"
		}
	}
	return cmp.Or(base, "file")
}

var labels = map[string]string{
	"application/pdf": "PDF",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   "Word",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         "Excel",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint",
	"application/vnd.oasis.opendocument.text":                                   "OpenDocument text",
	"application/msword":        "Word (legacy)",
	"application/zip":           "ZIP archive",
	"application/json":          "JSON",
	"application/xml":           "XML",
	"application/octet-stream":  "binary",
	"text/plain":                "Text",
	"text/markdown":             "Markdown",
	"text/html":                 "HTML",
	"text/csv":                  "CSV",
	"text/tab-separated-values": "TSV",
	"text/vnd.hocr+html":        "hOCR",
	"image/jpeg":                "JPEG image",
	"image/svg+xml":             "SVG image",
}

// Size formats n bytes for people, in powers of 1024 with one decimal above
// the kilobyte: "812 B", "240 KB", "1.0 MB".
func Size(n int64) string {
	const unit = 1024
	switch {
	case n < unit:
		return fmt.Sprintf("%d B", n)
	case n < unit*unit-unit/2: // what would round to 1024 KB reads 1.0 MB
		return fmt.Sprintf("%.0f KB", float64(n)/unit)
	case n < unit*unit*unit-unit*unit/20: // what would round to 1024.0 MB reads 1.0 GB
		return fmt.Sprintf("%.1f MB", float64(n)/(unit*unit))
	default:
		return fmt.Sprintf("%.1f GB", float64(n)/(unit*unit*unit))
	}
}

// Describe is how a file is shown to a model or a person:
// "report.pptx (PowerPoint, 1.0 MB)".
func Describe(name, mimeType string, size int64) string {
	return fmt.Sprintf("%s (%s, %s)", name, Label(mimeType), Size(size))
}

// IsText reports whether a file of MIME type mimeType is text a reader can
// show as it is: text/*, JSON, XML, YAML, JavaScript and SVG, with their
// +json and +xml kin. Content is still text only when it is valid UTF-8.
func IsText(mimeType string) bool {
	base, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return false
	}
	if strings.HasPrefix(base, "text/") || strings.HasSuffix(base, "+json") || strings.HasSuffix(base, "+xml") {
		return true
	}
	switch base {
	case "application/json", "application/x-ndjson", "application/xml", "application/yaml", "application/x-yaml",
		"application/javascript", "application/toml", "application/sql", "application/x-sh":
		return true
	}
	return false
}

// Agrees reports whether content detected as detected may be what its
// sender declared as declared: the same type (parameters aside); any
// content for application/octet-stream; any text for a text type (content
// cannot tell Markdown from plain text, nor CSV from notes); an Office
// Open XML package for application/zip, which it is.
func Agrees(declared, detected string) bool {
	d, _, err1 := mime.ParseMediaType(declared)
	t, _, err2 := mime.ParseMediaType(detected)
	switch {
	case err1 != nil || err2 != nil:
		return false
	case d == t, d == "application/octet-stream":
		return true
	case IsText(d) && IsText(t):
		return true
	}
	return d == "application/zip" && strings.HasPrefix(t, "application/vnd.openxmlformats-officedocument.")
}

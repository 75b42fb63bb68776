package mcptrace

import (
	"sync/atomic"

	"github.com/agentura/agentura/filename"
	"go.opentelemetry.io/otel/attribute"
)

// AttrFileName is the attribute of a span that names one file, and
// AttrFileNames of one that names several; they are set only when file
// names are allowed (FileName, FileNamesAttr).
const (
	AttrFileName  = attribute.Key("agentura.file.name")
	AttrFileNames = attribute.Key("agentura.file.names")
)

// maxNameBytes caps a file name in a span.
const maxNameBytes = 200

// fileNames is whether this process's spans may name files.
var fileNames atomic.Bool

// SetFileNames allows file names in this process's spans, or forbids them
// again: an agent sets it from AGENT_TRACE_FILE_NAMES when it is built. It
// is off by default; it is the process's, as the tracer provider is.
func SetFileNames(on bool) { fileNames.Store(on) }

// FileNames reports whether this process's spans may name files. Off, no
// span attribute or status of this module holds a file's name: spans name
// files through FileName and FileNamesAttr alone, and Scrub cuts URL paths
// and absolute paths from words.
func FileNames() bool { return fileNames.Load() }

// FileName is the attribute naming the file name in a span: the name as
// filename.Base cleans it (no folders, no control or bidirectional
// characters), at most 200 bytes. ok is false when file names are not
// allowed (FileNames) or nothing is left of name: then set nothing.
func FileName(name string) (kv attribute.KeyValue, ok bool) {
	if clean := spanName(name); FileNames() && clean != "" {
		return AttrFileName.String(clean), true
	}
	return kv, false
}

// FileNamesAttr is the attribute naming several files in a span (a
// call's outputs), each cleaned as FileName cleans it; ok is false when
// file names are not allowed or none is left.
func FileNamesAttr(names ...string) (kv attribute.KeyValue, ok bool) {
	if !FileNames() {
		return kv, false
	}
	clean := make([]string, 0, len(names))
	for _, n := range names {
		if c := spanName(n); c != "" {
			clean = append(clean, c)
		}
	}
	if len(clean) == 0 {
		return kv, false
	}
	return AttrFileNames.StringSlice(clean), true
}

// spanName is name as a span may hold it.
func spanName(name string) string {
	return filename.Shorten(filename.Base(name), maxNameBytes)
}

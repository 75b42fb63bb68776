// Package transport holds each way a file travels between a caller and the
// agent, one implementation of Transport each, and the one list (Registry)
// that the resolver, the schema builder and the response builder iterate:
// none of them names a transport. In: a data URI or base64 inline, an
// http(s) URL (this agent's own signed URLs, staged by /uploads or tus, are
// read from the store), a file URI of the draft MCP file contract (SEP-2631),
// a path under an input root. Out: a signed download URL, the draft's
// FileValue. Beside them: the inline pass (long inline files staged as the
// request body arrives) and the draft's upload descriptors.
package transport

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/transfer"
)

// A Transport is one way a file travels.
type Transport interface {
	// Schemes are the URI schemes (lower case) of the content it resolves:
	// "data", or "http" and "https". None for one that reads content
	// without a scheme (a path, base64), which the resolver asks in list
	// order once no scheme matched.
	Schemes() []string
	// Describe is how the transport appears in a file parameter's schema.
	Describe() Description
	// Resolves reports whether content, which none of the schemed
	// transports took, is this one's. A schemed transport is asked only
	// for content of its schemes.
	Resolves(content string) bool
	// Open opens the file content names, for owner. Its errors say what
	// was wrong and what to do.
	Open(ctx context.Context, owner, content string) (*Source, error)
	// Offer adds to o how this transport hands out the stored output m;
	// a transport that hands out nothing leaves o as it is.
	Offer(m fileserve.Meta, o *Offer) error
}

// Description is how a transport appears in a file parameter's schema.
type Description struct {
	// Content names the content it takes, for the schema's description of
	// a file ("data URI").
	Content string
	// Mode is the draft's transfer mode it stands for (mcpfile.ModeInline,
	// mcpfile.ModeUpload), "" for none.
	Mode string
}

// Source is a file a transport opened for the resolver.
type Source struct {
	io.ReadCloser
	// Name is the file's own name (a data URI's name=, a URL's last
	// segment, a stored file's name); "" for none.
	Name string
	// MIMEType is what the source says of the type, taken when the
	// content says nothing better; "" for none.
	MIMEType string
	// Size is the length when known before reading, else -1.
	Size int64
	// Where names the source in errors ("the staged file", a URL).
	Where string
	// ReadError, when not nil, says what an error met while reading
	// means (a decode error of base64, a broken fetch).
	ReadError func(error) error
}

// Offer is how one produced file is handed out.
type Offer struct {
	// File is its description in structured content.
	File transfer.File
	// Links are URIs it can be fetched from, one resource_link (MCP) or
	// file part (A2A) each.
	Links []string
}

// Registry is the ordered list of an agent's transports.
type Registry struct {
	list []Transport
}

// newRegistry lists ts in order: the first transport whose scheme matches
// resolves a content, then the scheme-less ones are asked in order.
func newRegistry(ts ...Transport) *Registry { return &Registry{list: ts} }

// Add appends t to the list.
func (r *Registry) Add(t Transport) { r.list = append(r.list, t) }

// Schema is what the transports say of a file parameter: the phrase
// describing its content and the draft's transfer modes.
func (r *Registry) Schema() (content string, modes []string) {
	var names []string
	for _, t := range r.list {
		d := t.Describe()
		if d.Content != "" {
			names = append(names, d.Content)
		}
		if d.Mode != "" && !slices.Contains(modes, d.Mode) {
			modes = append(modes, d.Mode)
		}
	}
	return "The file: " + joinOr(names), modes
}

// Handout offers the stored output m through every transport.
func (r *Registry) Handout(m fileserve.Meta) (Offer, error) {
	o := Offer{File: transfer.File{Filename: m.Name, MIMEType: m.MIMEType, SizeBytes: m.Size, SHA256: m.SHA256}}
	for _, t := range r.list {
		if err := t.Offer(m, &o); err != nil {
			return Offer{}, err
		}
	}
	return o, nil
}

// schemed returns the transport of content's scheme, if any.
func (r *Registry) schemed(content string) Transport {
	scheme, _, ok := strings.Cut(content, ":")
	if !ok {
		return nil
	}
	for _, t := range r.list {
		for _, s := range t.Schemes() {
			if strings.EqualFold(scheme, s) {
				return t
			}
		}
	}
	return nil
}

// joinOr writes "a, b, or c".
func joinOr(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + ", or " + items[len(items)-1]
}

// Standard lists the transports every agent has, in the order the resolver
// tries them: data URIs, URLs (signed, staged or fetched), the draft's file
// URIs, paths under an input root, bare base64.
func Standard(url URL, fileURIs *FileURIs, path *Path) *Registry {
	return newRegistry(Inline{}, url, fileURIs, path, Inline{Bare: true})
}

// StandardSchema is Schema of the standard transports.
func StandardSchema() (content string, modes []string) {
	return Standard(URL{}, &FileURIs{}, &Path{}).Schema()
}

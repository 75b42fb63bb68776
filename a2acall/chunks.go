package a2acall

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transferclient"
)

// Produced files that arrive in chunks (docs/a2a.md): the client asks for
// them (message metadata transfer.A2AKeyChunks) and writes each chunk at
// its offset into a temporary file outside the output folder, noting the
// ranges it has. When the task has ended, the artifact's last chunk gives
// the file's size, sha256 and signed URL: a range the client missed (its
// stream broke and it resubscribed) is fetched from the URL with an HTTP
// Range request, and the whole file goes through the one save path (save),
// which checks the sha256 as it copies and links the file into the folder
// only when it is whole and right.

// span is a range of bytes [from, to) of a file.
type span struct{ from, to int64 }

// assembly is a produced file arriving in chunks.
type assembly struct {
	name string
	f    *os.File // the temporary file, outside the output folder; nil once refused
	have []span   // the ranges written, sorted and merged
	// err refuses the file (over the cap, a malformed chunk): its later
	// chunks are dropped, and the call fails with err once the task has
	// ended, as for a file downloaded whole.
	err error
}

// assemblies are the files of a call arriving in chunks, by artifact.
type assemblies struct {
	max  int64 // the cap of a file (Client.MaxBytes)
	byID map[a2a.ArtifactID]*assembly
}

// take writes the chunk parts of a to their files and reports whether a
// held any: an update that carries chunks is not kept as an artifact. A
// chunk it cannot take refuses its file (assembly.err).
func (as *assemblies) take(a *a2a.Artifact) bool {
	if a == nil {
		return false
	}
	took := false
	for _, p := range a.Parts {
		fp, ok := p.(a2a.FilePart)
		if !ok {
			continue
		}
		raw, ok := fp.Metadata[transfer.MetaChunkOffset]
		if !ok {
			continue
		}
		took = true
		fb, ok := fp.File.(a2a.FileBytes)
		name := cmp.Or(a.Name, fb.Name)
		off, okOff := raw.(float64)
		if !ok || !okOff || off < 0 || off != float64(int64(off)) {
			as.refuse(a.ID, name, fmt.Errorf("receive %q: a chunk without bytes or with offset %v; the agent sends chunks as file parts with bytes and a whole offset", name, raw))
			continue
		}
		data, err := base64.StdEncoding.DecodeString(fb.Bytes)
		if err != nil {
			as.refuse(a.ID, name, fmt.Errorf("receive %q: a chunk's bytes are not base64: %w", name, err))
			continue
		}
		as.write(a.ID, name, int64(off), data)
	}
	return took
}

// write puts data at off in the file of artifact id.
func (as *assemblies) write(id a2a.ArtifactID, name string, off int64, data []byte) {
	end := off + int64(len(data))
	if len(data) == 0 {
		return // an assembly always has a file and a range written, or an error
	}
	if end > as.max {
		as.refuse(id, name, fmt.Errorf("receive %q: %w: a chunk ends at byte %d, over the cap of %d", name, transferclient.ErrTooLarge, end, as.max))
		return
	}
	a := as.of(id, name)
	if a.err != nil {
		return
	}
	if a.f == nil {
		f, err := os.CreateTemp("", "a2a-chunks-")
		if err != nil {
			as.refuse(id, name, fmt.Errorf("receive %q: make its temporary file: %w", name, err))
			return
		}
		a.f = f
	}
	if _, err := a.f.WriteAt(data, off); err != nil {
		as.refuse(id, name, fmt.Errorf("receive %q: %w", name, err))
		return
	}
	a.add(span{off, end})
}

// of returns the assembly of artifact id, made if new.
func (as *assemblies) of(id a2a.ArtifactID, name string) *assembly {
	a := as.byID[id]
	if a == nil {
		if as.byID == nil {
			as.byID = map[a2a.ArtifactID]*assembly{}
		}
		a = &assembly{name: name}
		as.byID[id] = a
	}
	return a
}

// refuse ends the assembly of artifact id with err, its temporary file
// removed; the first error stays.
func (as *assemblies) refuse(id a2a.ArtifactID, name string, err error) {
	a := as.of(id, name)
	a.err = cmp.Or(a.err, err)
	a.remove()
}

// remove removes the temporary file.
func (a *assembly) remove() {
	if a.f != nil {
		a.f.Close()
		os.Remove(a.f.Name())
		a.f = nil
	}
}

// add notes s as written.
func (a *assembly) add(s span) {
	if s.from == s.to {
		return
	}
	a.have = append(a.have, s)
	slices.SortFunc(a.have, func(x, y span) int { return cmp.Compare(x.from, y.from) })
	merged := a.have[:1]
	for _, s := range a.have[1:] {
		last := &merged[len(merged)-1]
		if s.from <= last.to {
			last.to = max(last.to, s.to)
			continue
		}
		merged = append(merged, s)
	}
	a.have = merged
}

// missing returns the ranges of a file of size bytes not written.
func (a *assembly) missing(size int64) []span {
	var gaps []span
	at := int64(0)
	for _, s := range a.have {
		if s.from > at {
			gaps = append(gaps, span{at, min(s.from, size)})
		}
		at = max(at, s.to)
	}
	if at < size {
		gaps = append(gaps, span{at, size})
	}
	return gaps
}

// close removes every temporary file.
func (as *assemblies) close() {
	for _, a := range as.byID {
		a.remove()
	}
}

// assembled saves the file of artifact art that arrived in chunks as a:
// the ranges missing fetched from the file's URI, then the whole checked
// against the size and sha256 the last chunk gives, through save.
func (c *Client) assembled(ctx context.Context, hc *http.Client, base *url.URL, dir string, art *a2a.Artifact, uri *a2a.FileURI, a *assembly) (File, error) {
	if a.err != nil {
		return File{}, c.capHint(a.err)
	}
	name := a.name
	mimeType := ""
	if uri != nil {
		name, mimeType = cmp.Or(uri.Name, name), uri.MimeType
	}
	size, ok := art.Metadata["size_bytes"].(float64)
	if !ok || size < 0 || size != float64(int64(size)) {
		return File{}, fmt.Errorf("receive %q: it came in chunks but its last chunk gives no size (size_bytes); the agent must send it", name)
	}
	total := int64(size)
	if total > c.maxBytes() {
		return File{}, c.capHint(fmt.Errorf("receive %q: %w: %d bytes, over the cap of %d", name, transferclient.ErrTooLarge, total, c.maxBytes()))
	}
	if end := a.have[len(a.have)-1].to; end > total {
		return File{}, fmt.Errorf("receive %q: chunks up to byte %d, but the file has %d bytes", name, end, total)
	}
	for _, gap := range a.missing(total) {
		if uri == nil {
			return File{}, fmt.Errorf("receive %q: bytes %d-%d never arrived and its artifact has no uri to fetch them from", name, gap.from, gap.to-1)
		}
		if err := c.fetchRange(ctx, hc, base, uri.URI, a.f, gap); err != nil {
			return File{}, fmt.Errorf("receive %q: fill the bytes %d-%d the broken stream missed: %w", name, gap.from, gap.to-1, err)
		}
	}
	sum, _ := art.Metadata[transfer.MetaSHA256].(string)
	if sum == "" {
		return File{}, fmt.Errorf("receive %q: it came in chunks but its last chunk gives no sha256; the agent must send it", name)
	}
	lf, err := c.save(dir, name, mimeType, transfer.VerifySHA256(io.NewSectionReader(a.f, 0, total), sum, name))
	if err != nil {
		return File{}, err
	}
	if lf.Size != total {
		os.Remove(lf.Path)
		return File{}, fmt.Errorf("receive %q: %d bytes saved, the agent announced %d", name, lf.Size, total)
	}
	return lf, nil
}

// fetchRange writes the bytes s of the file at rawURI into f, by a GET
// with a Range header under the download guard.
func (c *Client) fetchRange(ctx context.Context, hc *http.Client, base *url.URL, rawURI string, f *os.File, s span) error {
	guard := transferclient.Guard{Origin: base, AllowHosts: c.DownloadHosts, AllowSetting: "a2acall.Client.DownloadHosts"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURI, nil)
	if err != nil {
		return fmt.Errorf("%q is not a URL", transfer.Redact(rawURI))
	}
	want := "bytes " + strconv.FormatInt(s.from, 10) + "-" + strconv.FormatInt(s.to-1, 10) + "/"
	req.Header.Set("Range", "bytes="+strconv.FormatInt(s.from, 10)+"-"+strconv.FormatInt(s.to-1, 10))
	resp, err := guard.Client(hc).Do(req)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			ue.URL = transfer.Redact(ue.URL)
		}
		return err
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Content-Range"); resp.StatusCode != http.StatusPartialContent || len(got) < len(want) || got[:len(want)] != want {
		return fmt.Errorf("GET %s with Range: %s, Content-Range %q; want 206 for %s", transfer.Redact(rawURI), transferclient.Describe(resp), resp.Header.Get("Content-Range"), want)
	}
	n, err := io.Copy(io.NewOffsetWriter(f, s.from), io.LimitReader(resp.Body, s.to-s.from))
	if err != nil {
		return err
	}
	if n != s.to-s.from {
		return fmt.Errorf("GET %s with Range: %d bytes, want %d", transfer.Redact(rawURI), n, s.to-s.from)
	}
	return nil
}

package fonts

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/image/font/sfnt"
)

// DefaultDirs are the folders searched for fonts when AGENT_FONT_DIRS is not
// set: the composer image's own fonts, then the usual system folders.
// /usr/share/fonts-droid-fallback is where Debian's fonts-droid-fallback keeps
// DroidSansFallback.ttf, the one of its two files that has Hangul.
var DefaultDirs = []string{"/usr/share/agentura/fonts", "/usr/share/fonts", "/usr/local/share/fonts", "/usr/share/fonts-droid-fallback"}

// preferred are the font files tried first, in order, for characters the
// embedded DejaVu Sans lacks: the ones chosen for the scripts the composer
// promises (Devanagari; Chinese, Japanese and Korean). Every other TrueType
// file found comes after them, by name.
var preferred = []string{
	"NotoSansDevanagari-Regular.ttf", // fonts-noto-core
	"DroidSansFallback.ttf",          // fonts-droid-fallback: Han, kana and Hangul in one file
	"DroidSansFallbackFull.ttf",      // fonts-droid-fallback: more Han, no Hangul
	"NotoSans-Regular.ttf",           // fonts-noto-core
}

// Face is one font file that fpdf can embed: TrueType outlines (glyf) with a
// Unicode cmap of format 4.
type Face struct {
	// Path is the file the face was read from.
	Path string
	// Data is the file's content, as fpdf's AddUTF8FontFromBytes takes it.
	Data []byte

	font *sfnt.Font
	mu   sync.Mutex
	buf  sfnt.Buffer
}

// Has reports whether the face has a glyph for r.
func (f *Face) Has(r rune) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, err := f.font.GlyphIndex(&f.buf, r)
	return err == nil && g != 0
}

// ParseFace checks that data is a font fpdf can embed and returns it as a
// face; ok is false for OpenType/CFF (.otf), collections (.ttc) and fonts
// without a Unicode cmap of format 4, which fpdf refuses.
func ParseFace(path string, data []byte) (face *Face, ok bool) {
	if !embeddable(data) {
		return nil, false
	}
	f, err := sfnt.Parse(data)
	if err != nil {
		return nil, false
	}
	return &Face{Path: path, Data: data, font: f}, true
}

// embeddable reports whether data is what fpdf's UTF-8 font parser reads: a
// single TrueType font (version 0x00010000 or 'true'; not 'OTTO', the CFF
// flavour, nor 'ttcf', a collection) with a cmap subtable of format 4 for
// Unicode (platform 0, or platform 3 encoding 1).
func embeddable(data []byte) bool {
	if len(data) < 12 {
		return false
	}
	be := binary.BigEndian
	if v := be.Uint32(data); v != 0x00010000 && v != 0x74727565 {
		return false
	}
	tables := int(be.Uint16(data[4:]))
	for i := range tables {
		rec := 12 + 16*i
		if rec+16 > len(data) {
			return false
		}
		if !bytes.Equal(data[rec:rec+4], []byte("cmap")) {
			continue
		}
		cmap := int(be.Uint32(data[rec+8:]))
		if cmap+4 > len(data) {
			return false
		}
		n := int(be.Uint16(data[cmap+2:]))
		for j := range n {
			e := cmap + 4 + 8*j
			if e+8 > len(data) {
				return false
			}
			platform, encoding := be.Uint16(data[e:]), be.Uint16(data[e+2:])
			sub := cmap + int(be.Uint32(data[e+4:]))
			if (platform == 0 || platform == 3 && encoding == 1) && sub+2 <= len(data) && be.Uint16(data[sub:]) == 4 {
				return true
			}
		}
		return false
	}
	return false
}

// Fallback finds, among the font files in some folders, one that has a glyph
// for a character: the fallback chain behind the embedded fonts. Files are
// listed once, at first use, and read only when needed; a face that covered a
// character is kept and asked first afterwards. A Fallback is safe for
// concurrent use.
type Fallback struct {
	dirs []string

	listOnce sync.Once
	files    []string // TrueType candidates: preferred first, then by name

	mu      sync.Mutex
	found   []*Face             // faces that covered something, in chain order
	byRune  map[rune]*Face      // answers so far (nil: no face has it)
	lacking map[string]struct{} // scripts no file covers
}

// NewFallback returns the fallback chain of the font files in dirs (searched
// recursively; nil means DefaultDirs).
func NewFallback(dirs []string) *Fallback {
	if dirs == nil {
		dirs = DefaultDirs
	}
	return &Fallback{dirs: dirs, byRune: map[rune]*Face{}, lacking: map[string]struct{}{}}
}

// Dirs returns the folders the chain searches.
func (fb *Fallback) Dirs() []string { return slices.Clone(fb.dirs) }

// list finds the candidate files: *.ttf under the folders, preferred names
// first. Unreadable folders are skipped.
func (fb *Fallback) list() {
	var all []string
	seen := map[string]bool{}
	for _, dir := range fb.dirs {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.EqualFold(filepath.Ext(path), ".ttf") {
				return nil
			}
			if real, err := filepath.EvalSymlinks(path); err == nil && !seen[real] {
				seen[real] = true
				all = append(all, path)
			}
			return nil
		})
	}
	rank := func(p string) int {
		if i := slices.Index(preferred, filepath.Base(p)); i >= 0 {
			return i
		}
		return len(preferred)
	}
	slices.SortStableFunc(all, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(filepath.Base(a), filepath.Base(b))
	})
	fb.files = all
}

// Face returns the first face of the chain with a glyph for r, or nil when
// no font file in the folders has one.
func (fb *Fallback) Face(r rune) *Face {
	fb.listOnce.Do(fb.list)
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if f, ok := fb.byRune[r]; ok {
		return f
	}
	f := fb.search(r)
	fb.byRune[r] = f
	return f
}

// search looks for r in the faces found so far, then in the files not yet
// kept, in chain order. A script no file covered is not searched again.
func (fb *Fallback) search(r rune) *Face {
	for _, f := range fb.found {
		if f.Has(r) {
			return f
		}
	}
	script := Script(r)
	if _, ok := fb.lacking[script]; ok {
		return nil
	}
	for _, path := range fb.files {
		if slices.ContainsFunc(fb.found, func(f *Face) bool { return f.Path == path }) {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		f, ok := ParseFace(path, data)
		if !ok || !f.Has(r) {
			continue
		}
		fb.found = append(fb.found, f)
		slices.SortStableFunc(fb.found, func(a, b *Face) int {
			return slices.Index(fb.files, a.Path) - slices.Index(fb.files, b.Path)
		})
		return f
	}
	fb.lacking[script] = struct{}{}
	return nil
}

// Script is the name of r's Unicode script ("Han", "Arabic"), "Common" for
// punctuation and symbols shared by scripts.
func Script(r rune) string {
	for _, name := range scriptNames {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	return "Unknown"
}

// scriptNames are unicode.Scripts' keys, sorted, so that Script is
// deterministic.
var scriptNames = slices.Sorted(maps.Keys(unicode.Scripts))

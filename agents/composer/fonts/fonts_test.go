package fonts

import (
	"os"
	"path/filepath"
	"testing"
)

// TestParseFace: the embedded fonts are TrueType fpdf can embed; OpenType
// CFF and collections are refused, as fpdf refuses them.
func TestParseFace(t *testing.T) {
	f, ok := ParseFace("DejaVuSans.ttf", Sans)
	if !ok || !f.Has('Ж') || !f.Has('\uFE8F') || f.Has('東') {
		t.Fatalf("DejaVu Sans: ok %v; want Cyrillic and Arabic presentation forms, no Han", ok)
	}
	for name, head := range map[string]string{"otf": "OTTO", "ttc": "ttcf", "junk": "abcd"} {
		data := append([]byte(head), Sans[4:]...)
		if _, ok := ParseFace(name, data); ok {
			t.Errorf("%s accepted; fpdf cannot embed it", name)
		}
	}
}

// TestFallback finds a font file for a character, in a folder tree, and
// says so when there is none.
func TestFallback(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "DejaVuSansMono.ttf"), Mono, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.ttf"), []byte("not a font"), 0o600); err != nil {
		t.Fatal(err)
	}
	fb := NewFallback([]string{filepath.Join(dir, "missing"), dir})
	if f := fb.Face('Ж'); f == nil || filepath.Base(f.Path) != "DejaVuSansMono.ttf" {
		t.Errorf("Face('Ж') = %v; want DejaVuSansMono.ttf", f)
	}
	if f := fb.Face('東'); f != nil {
		t.Errorf("Face('東') = %s; no file has it", f.Path)
	}
	if s := Script('東'); s != "Han" {
		t.Errorf("Script('東') = %q", s)
	}
}

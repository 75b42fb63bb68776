package signing_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/agentura/agentura/signing"
)

// FileURL puts the file id and the escaped name under <base>/files/, keeps
// the slashes of a sub-path, and carries a token that verifies to the claims.
func TestFileURL(t *testing.T) {
	s := newSigner(t, audience, newKey(t))
	c := claims()
	for _, tc := range []struct{ base, name, path, escaped string }{
		{audience, "Quartalsbericht Q1.md", "/files/" + c.FileID + "/Quartalsbericht Q1.md", "Quartalsbericht%20Q1.md"},
		{audience + "/", "images/a b.png", "/files/" + c.FileID + "/images/a b.png", "images/a%20b.png"},
		{audience, "50%/x?#.txt", "/files/" + c.FileID + "/50%/x?#.txt", "50%25/x%3F%23.txt"},
		{"https://example.com/agents/ocr/", "résumé.pdf", "/agents/ocr/files/" + c.FileID + "/résumé.pdf", "r%C3%A9sum%C3%A9.pdf"},
	} {
		raw, err := s.FileURL(tc.base, c, tc.name)
		if err != nil {
			t.Fatalf("FileURL(%q, %q): %v", tc.base, tc.name, err)
		}
		if want := strings.TrimSuffix(tc.base, "/") + "/files/" + c.FileID + "/" + tc.escaped + "?token="; !strings.HasPrefix(raw, want) {
			t.Errorf("FileURL(%q, %q) = %q; want it to start with %q", tc.base, tc.name, raw, want)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("FileURL(%q, %q) = %q: %v", tc.base, tc.name, raw, err)
		}
		if u.Path != tc.path {
			t.Errorf("FileURL(%q, %q) = %q: path %q; want %q", tc.base, tc.name, raw, u.Path, tc.path)
		}
		if len(u.Query()) != 1 {
			t.Errorf("FileURL(%q, %q) = %q: want the token as the only parameter", tc.base, tc.name, raw)
		}
		got, err := s.Verify(u.Query().Get("token"))
		if err != nil {
			t.Fatalf("the token of %q: %v", raw, err)
		}
		if got.Owner != c.Owner || got.FileID != c.FileID || got.Area != c.Area || !got.ExpiresAt.Equal(c.ExpiresAt) {
			t.Errorf("the token of %q verifies to %+v; want %+v", raw, got, c)
		}
	}
}

// What a file service would refuse, or no store keeps, is an error naming
// what is wrong, and no URL.
func TestFileURLRefuses(t *testing.T) {
	s := newSigner(t, audience, newKey(t))
	withID := func(id string) signing.Claims { c := claims(); c.FileID = id; return c }
	noOwner := claims()
	noOwner.Owner = ""
	for _, tc := range []struct {
		base string
		c    signing.Claims
		name string
		says string
	}{
		{"", claims(), "a.md", "base URL"},
		{"localhost:8001", claims(), "a.md", "base URL"},
		{"ftp://example.com", claims(), "a.md", "base URL"},
		{"http://", claims(), "a.md", "base URL"},
		{audience + "?x=1", claims(), "a.md", "base URL"},
		{audience + "?", claims(), "a.md", "base URL"},
		{audience + "#top", claims(), "a.md", "base URL"},
		{audience, claims(), "", "file name"},
		{audience, claims(), "a//b.md", "file name"},
		{audience, claims(), "/a.md", "file name"},
		{audience, claims(), "a/", "file name"},
		{audience, claims(), "../a.md", "file name"},
		{audience, claims(), "a/./b.md", "file name"},
		{audience, claims(), "...", "file name"},
		{audience, claims(), `a\b.md`, "file name"},
		{audience, claims(), "a\nb.md", "file name"},
		{audience, claims(), "a\x7fb.md", "file name"},
		{audience, claims(), "a\xffb.md", "file name"},
		{audience, withID("a/b"), "a.md", "file id"},
		{audience, withID(".."), "a.md", "file id"},
		{audience, withID("a b"), "a.md", "file id"},
		{audience, withID(""), "a.md", "owner and a file id"},
		{audience, noOwner, "a.md", "owner and a file id"},
	} {
		u, err := s.FileURL(tc.base, tc.c, tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("FileURL(%q, %+v, %q) = %q, %v; want an error about the %s", tc.base, tc.c, tc.name, u, err, tc.says)
		}
		if u != "" {
			t.Errorf("FileURL(%q, %+v, %q) returned %q with its error", tc.base, tc.c, tc.name, u)
		}
	}
}

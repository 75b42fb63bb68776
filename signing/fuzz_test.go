package signing_test

import (
	"strings"
	"testing"
)

// FuzzVerify feeds arbitrary text to the token parser: it never panics,
// and it accepts no token but one it signed.
func FuzzVerify(f *testing.F) {
	k := newKey(f)
	s := newSigner(f, audience, k)
	valid := sign(f, s, claims())
	f.Add(valid)
	f.Add(valid[:len(valid)-3])
	f.Add(strings.Replace(valid, ".", "..", 1))
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("")
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := s.Verify(tok)
		if err == nil && tok != valid {
			// Only the signer's own token (or an equivalent encoding of it)
			// may verify, and it names the same claims.
			if c.FileID != claims().FileID || c.Owner != claims().Owner {
				t.Errorf("forged token accepted: %q -> %+v", tok, c)
			}
		}
	})
}

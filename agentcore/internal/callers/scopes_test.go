package callers

import (
	"strings"
	"testing"
)

func TestQuotableKeepsChallengesParseable(t *testing.T) {
	if got := quotable("bad \"kid\"\\\n\u00e9"); strings.ContainsAny(got, "\"\\\n\u00e9") {
		t.Errorf("%q", got)
	}
}

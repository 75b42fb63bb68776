package filehttp

import (
	"testing"
	"time"

	"github.com/agentura/agentura/signing"
)

func TestTokenCache(t *testing.T) {
	c := newTokenCache()
	now := time.Now()
	c.Put("a", signing.Claims{FileID: "x", ExpiresAt: now.Add(time.Minute)})
	if got, ok := c.valid("a", now); !ok || got.FileID != "x" {
		t.Errorf("get = %+v, %v", got, ok)
	}
	if _, ok := c.valid("a", now.Add(time.Minute)); ok {
		t.Error("an expired token was served from the cache")
	}
	if _, ok := c.valid("a", now); ok {
		t.Error("an expired token stayed in the cache")
	}
	for i := range tokenCacheSize + 10 {
		c.Put(string(rune(i+1000)), signing.Claims{ExpiresAt: now.Add(time.Hour)})
	}
	if n := c.Len(); n > tokenCacheSize {
		t.Errorf("cache holds %d tokens, more than %d", n, tokenCacheSize)
	}
}

func TestQueryToken(t *testing.T) {
	for raw, want := range map[string]string{
		"token=abc.def.ghi":            "abc.def.ghi",
		"x=1&token=abc&token=second":   "abc",
		"tokens=no&token=yes":          "yes",
		"token=a%2Eb":                  "a.b",
		"token=%zz":                    "",
		"":                             "",
		"token":                        "",
		"foo=bar":                      "",
		"token=&token=late":            "",
		"download=1&token=eyJ.eyJ.sig": "eyJ.eyJ.sig",
	} {
		if got := queryToken(raw); got != want {
			t.Errorf("queryToken(%q) = %q, want %q", raw, got, want)
		}
	}
}

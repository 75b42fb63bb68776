package transfer

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestDataURI(t *testing.T) {
	got, err := DataURI(strings.NewReader("hi"), "text/plain; charset=utf-8", "a b.txt", 2)
	if want := "data:text/plain;name=a%20b.txt;base64," + base64.StdEncoding.EncodeToString([]byte("hi")); err != nil || got != want {
		t.Errorf("DataURI = %q, %v; want %q", got, err, want)
	}
	for mt, want := range map[string]string{"": "application/octet-stream", "garbage": "application/octet-stream", "image/png": "image/png"} {
		if got := DataURIPrefix(mt, ""); got != "data:"+want+";base64," {
			t.Errorf("DataURIPrefix(%q) = %q", mt, got)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://agent.example/files/id/a.pdf?token=eyJ.x.y": "https://agent.example/files/id/a.pdf?…",
		"http://user:pass@agent.example/x?token=t#frag":      "http://REDACTED@agent.example/x?…",
		"s3://KEY:SECRET@bucket?endpoint=h:9000":             "s3://REDACTED@bucket?…",
		"http://agent.example/x#token=t":                     "http://agent.example/x?…",
		"not a url ?token":                                   "not a url ?…",
		"http://agent.example/a@b":                           "http://agent.example/a@b",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactUserinfo(t *testing.T) {
	if got := RedactUserinfo("s3://KEY:SECRET@bucket/p?endpoint=h:9000"); got != "s3://REDACTED@bucket/p?endpoint=h:9000" {
		t.Errorf("RedactUserinfo = %q", got)
	}
	if got := RedactUserinfo("http://h/x?a@b"); got != "http://h/x?a@b" {
		t.Errorf("an @ in the query is not user information: %q", got)
	}
}

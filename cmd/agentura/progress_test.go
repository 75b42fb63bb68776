package main

import (
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/client"
)

func TestProgressBars(t *testing.T) {
	var buf strings.Builder
	p := newProgress(&buf, true)
	now := time.Unix(0, 0)
	p.now = func() time.Time { return now }
	p.update(client.Progress{Direction: client.Upload, Name: "small.bin", Done: 512 << 10, Total: 1 << 20})
	if buf.Len() != 0 {
		t.Fatalf("a 1 MiB transfer got a bar: %q", buf.String())
	}
	const total = 30 << 20
	for _, done := range []int64{1 << 20, 2 << 20, 15 << 20, total} {
		now = now.Add(50 * time.Millisecond)
		p.update(client.Progress{Direction: client.Upload, Name: "scan.pdf", Done: done, Total: total})
	}
	out := buf.String()
	if n := strings.Count(out, "\r"); n != 3 {
		t.Errorf("%d redraws, want 3 (the first, one 100 ms later, the last):\n%q", n, out)
	}
	last := out[strings.LastIndex(out, "\r")+1:]
	want := "upload   scan.pdf  [########################] 100%  30.0 MB/30.0 MB  200.0 MB/s\n"
	if last != want {
		t.Errorf("last bar\n%q, want\n%q", last, want)
	}

	buf.Reset()
	off := newProgress(&buf, false)
	off.update(client.Progress{Direction: client.Download, Name: "x", Done: total, Total: total})
	off.done()
	if buf.Len() != 0 {
		t.Errorf("bars drawn while off: %q", buf.String())
	}
}

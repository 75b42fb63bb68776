package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/filetype"
)

// barMinBytes is the smallest transfer that gets a progress bar.
const barMinBytes = 1 << 20

// progress draws one bar per transfer of more than barMinBytes on a
// terminal, redrawn at most every 100 ms; it draws nothing when off.
type progress struct {
	w       io.Writer
	on      bool
	mu      sync.Mutex
	cur     string // name of the transfer being drawn
	started time.Time
	last    time.Time
	drawn   bool
	now     func() time.Time
}

func newProgress(w io.Writer, on bool) *progress {
	return &progress{w: w, on: on, now: time.Now}
}

// update is the client.Config.Progress callback.
func (p *progress) update(ev client.Progress) {
	if !p.on || (ev.Total >= 0 && ev.Total <= barMinBytes) || (ev.Total < 0 && ev.Done <= barMinBytes) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := string(ev.Direction) + " " + ev.Name
	now := p.now()
	if key != p.cur {
		if p.drawn {
			fmt.Fprintln(p.w)
		}
		p.cur, p.started, p.drawn = key, now, false
	}
	final := ev.Total >= 0 && ev.Done >= ev.Total
	if !final && p.drawn && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.drawn = now, true
	fmt.Fprint(p.w, "\r"+renderBar(ev, now.Sub(p.started)))
	if final {
		fmt.Fprintln(p.w)
		p.cur, p.drawn = "", false
	}
}

// done ends a bar left open (a transfer that failed half-way).
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// renderBar draws "upload scan.pdf  [#######.............]  35%  10.5 MB/30.0 MB  42.1 MB/s".
func renderBar(ev client.Progress, elapsed time.Duration) string {
	const width = 24
	speed := ""
	if s := elapsed.Seconds(); s > 0 {
		speed = "  " + filetype.Size(int64(float64(ev.Done)/s)) + "/s"
	}
	if ev.Total <= 0 {
		return fmt.Sprintf("%-8s %s  %s%s", ev.Direction, ev.Name, filetype.Size(ev.Done), speed)
	}
	frac := min(float64(ev.Done)/float64(ev.Total), 1)
	n := int(frac * width)
	return fmt.Sprintf("%-8s %s  [%s%s] %3.0f%%  %s/%s%s", ev.Direction, ev.Name,
		strings.Repeat("#", n), strings.Repeat(".", width-n), frac*100,
		filetype.Size(ev.Done), filetype.Size(ev.Total), speed)
}

// Package chromiumtest starts headless Chromium (Debian's chromium) for a
// test, driven with chromedp: the MCP Apps tests of internal/testkit/appstest
// and the demo login page's sign-in test (internal/tools/demologin) run in
// it, with the browser's own enforcement of Content-Security-Policy.
package chromiumtest

import (
	"context"
	"os/exec"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// Start starts Chromium for tb with chromedp's default flags (headless
// among them), no sandbox (tests run as root in containers), a
// /dev/shm-free renderer and the flags of extra, and returns the context of
// its first tab, made with ctxOpts. Chromium runs in a process group that
// internal/testkit/procgroup kills when the test ends, or the moment the
// test binary dies. Without Chromium the test is skipped (failed under
// AGENTURA_REQUIRE_TOOLS=1).
func Start(tb testing.TB, extra []chromedp.ExecAllocatorOption, ctxOpts ...chromedp.ContextOption) context.Context {
	tb.Helper()
	path := ExecPath(tb)
	var started *exec.Cmd
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), // containers have a small /dev/shm
	)
	opts = append(opts, extra...)
	opts = append(opts, chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
		procgroup.Prepare(cmd)
		started = cmd
	}))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, ctxOpts...)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		tb.Fatalf("start chromium: %v", err)
	}
	tb.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if started != nil {
		if _, err := procgroup.Adopt(tb, started); err != nil {
			tb.Fatalf("guard chromium's process group: %v", err)
		}
	}
	return ctx
}

// ExecPath finds Debian's chromium (or another Chrome) on PATH, or skips tb
// (fails it under AGENTURA_REQUIRE_TOOLS=1).
func ExecPath(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return requiretool.Command(tb, "chromium", "apt-get install chromium (Debian; .ci/apt.d/apps.txt)")
}

package mcptest

import "strings"

// LogBuffer collects a log written from several goroutines (an agent's
// slog handler in a test's own process) for [Warnings] to read.
type LogBuffer struct{ SyncBuffer }

// Warnings returns the lines of an agent's log, slog's text or JSON, at
// WARN or above: an ordinary run of calls has none. A /readyz answered 503
// is left out: it is the readiness check doing its job while the agent
// starts (logged at WARN as every 5xx is), which [Agent.WaitReady] polls
// through for longer on a busy machine.
func Warnings(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if readinessWait(line) {
			continue
		}
		for _, l := range []string{"level=WARN", "level=ERROR", `"level":"WARN"`, `"level":"ERROR"`} {
			if strings.Contains(line, l) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// readinessWait reports whether line is the access log of a /readyz that
// answered 503, in slog's text or JSON form.
func readinessWait(line string) bool {
	return (strings.Contains(line, "path=/readyz") && strings.Contains(line, "status=503")) ||
		(strings.Contains(line, `"path":"/readyz"`) && strings.Contains(line, `"status":503`))
}

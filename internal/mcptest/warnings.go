package mcptest

import "strings"

// LogBuffer collects a log written from several goroutines (an agent's
// slog handler in a test's own process) for [Warnings] to read.
type LogBuffer struct{ syncBuffer }

// Warnings returns the lines of an agent's log, slog's text or JSON, at
// WARN or above: an ordinary run of calls has none.
func Warnings(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		for _, l := range []string{"level=WARN", "level=ERROR", `"level":"WARN"`, `"level":"ERROR"`} {
			if strings.Contains(line, l) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

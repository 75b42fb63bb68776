package transfer

import "strings"

// Redact returns rawURL fit for a log line or an error message: the user
// information of its authority (user:password@) becomes "REDACTED@", and
// the query and fragment, where signed URLs carry their token, become "?…".
// It works on text that does not parse as a URL.
func Redact(rawURL string) string {
	out := rawURL
	if i := strings.IndexAny(out, "?#"); i >= 0 {
		out = out[:i] + "?…"
	}
	_, rest, ok := strings.Cut(out, "://")
	if !ok {
		return out
	}
	start := len(out) - len(rest)
	authority := rest
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority = rest[:i]
	}
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		return out[:start] + "REDACTED" + out[start+at:]
	}
	return out
}

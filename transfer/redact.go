package transfer

import "strings"

// Redact returns rawURL fit for a log line or an error message: the user
// information of its authority (user:password@) becomes "REDACTED@"
// (RedactUserinfo), and the query and fragment, where signed URLs carry
// their token, become "?…". It works on text that does not parse as a URL.
func Redact(rawURL string) string {
	if i := strings.IndexAny(rawURL, "?#"); i >= 0 {
		rawURL = rawURL[:i] + "?…"
	}
	return RedactUserinfo(rawURL)
}

// RedactUserinfo returns rawURL with the user information of its authority
// (user:password@) replaced by "REDACTED@" and the rest kept: for URLs whose
// query holds settings rather than secrets (a storage URL's endpoint=). A
// URL without user information is returned as it is; text that does not
// parse is handled too.
func RedactUserinfo(rawURL string) string {
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return rawURL
	}
	start := len(rawURL) - len(rest)
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return rawURL
	}
	return rawURL[:start] + "REDACTED" + rawURL[start+at:]
}

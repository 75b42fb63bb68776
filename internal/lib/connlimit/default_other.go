//go:build !unix

package connlimit

// DefaultMax is 0 (no cap) where the limit of open files is not read.
func DefaultMax() int { return 0 }

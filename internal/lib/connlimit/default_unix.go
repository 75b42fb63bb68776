//go:build unix

package connlimit

import "syscall"

// DefaultMax is half the process's limit of open files (RLIMIT_NOFILE, as
// the Go runtime raised it at start-up), leaving the other half to the
// files the server opens; 0 (no cap) when the limit is unknown.
func DefaultMax() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur == 0 {
		return 0
	}
	return int(min(r.Cur/2, 1<<30))
}

package pdfpreview

import (
	"time"

	"golang.org/x/sys/unix"
)

// limit caps the address space and the CPU time of the started process pid,
// set right after it starts (before it has read its input): a PDF built to
// exhaust memory makes pdftoppm fail, not the machine swap.
func limit(pid int, memory int64, cpu time.Duration) {
	secs := uint64(cpu/time.Second) + 1
	_ = unix.Prlimit(pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: uint64(memory), Max: uint64(memory)}, nil)
	_ = unix.Prlimit(pid, unix.RLIMIT_CPU, &unix.Rlimit{Cur: secs, Max: secs + 1}, nil)
}

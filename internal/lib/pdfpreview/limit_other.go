//go:build !linux

package pdfpreview

import (
	"os/exec"
	"time"
)

// ownGroup does nothing here: the time limit kills pdftoppm alone.
func ownGroup(*exec.Cmd) {}

// limit does nothing here: only the time limit bounds pdftoppm.
func limit(int, int64, time.Duration) {}

//go:build !linux

package pdfpreview

import "time"

// limit does nothing here: only the time limit bounds pdftoppm.
func limit(int, int64, time.Duration) {}

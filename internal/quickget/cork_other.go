//go:build !linux

package quickget

import (
	"errors"
	"syscall"
)

// SetCork reports that corking is Linux's (TCP_CORK): elsewhere responses
// go uncorked.
func SetCork(syscall.RawConn, bool) error { return errors.New("TCP_CORK is Linux only") }

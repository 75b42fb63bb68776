//go:build !linux

package filehttp

import (
	"errors"
	"syscall"
)

// setCork reports that corking is Linux's (TCP_CORK): elsewhere responses
// go uncorked.
func setCork(syscall.RawConn, bool) error { return errors.New("TCP_CORK is Linux only") }

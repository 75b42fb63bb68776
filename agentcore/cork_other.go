//go:build !linux

package agentcore

import (
	"errors"
	"syscall"
)

// setCork reports that corking is Linux's (TCP_CORK): elsewhere downloads
// go uncorked.
func setCork(syscall.RawConn, int) error { return errors.New("TCP_CORK is Linux only") }

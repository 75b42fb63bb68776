package agentcore

import "syscall"

// setCork sets TCP_CORK on the connection of rc.
func setCork(rc syscall.RawConn, on int) error {
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, on)
	}); err != nil {
		return err
	}
	return serr
}

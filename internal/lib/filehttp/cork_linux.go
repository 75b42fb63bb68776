package filehttp

import "syscall"

// setCork sets (on) or clears TCP_CORK on the socket of rc: while it is set,
// the kernel sends only full segments, and clearing it sends what is left
// (nginx's tcp_nopush). Headers written apart from the body, or a file sent
// by sendfile in chunks, then leave in full segments rather than one small
// segment at each boundary.
func setCork(rc syscall.RawConn, on bool) error {
	v := 0
	if on {
		v = 1
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, v)
	}); err != nil {
		return err
	}
	return serr
}

//go:build unix

package gateway

import "syscall"

// openNonblock opens a file under a root without waiting: a named pipe
// would otherwise block the open until a writer came, forever.
const openNonblock = syscall.O_NONBLOCK

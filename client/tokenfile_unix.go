//go:build !windows

package client

import (
	"fmt"
	"io/fs"
)

// private refuses a token file that the group or others may read or
// write: its tokens sign in as the user.
func private(path string, st fs.FileInfo) error {
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("token file %s may be read by others (mode %04o), and it holds the credentials of your sign-ins: "+
			"run `chmod 600 %s`, or delete it and sign in again", path, perm, path)
	}
	return nil
}

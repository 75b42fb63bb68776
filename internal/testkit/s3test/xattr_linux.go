//go:build linux

package s3test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// checkXattr sets a user extended attribute in dir, which versitygw's posix
// backend needs.
func checkXattr(dir string) error {
	p := filepath.Join(dir, ".xattr-probe")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return err
	}
	defer os.Remove(p)
	if err := syscall.Setxattr(p, "user.agentura", []byte("1"), 0); err != nil {
		return fmt.Errorf("setxattr: %w", err)
	}
	return nil
}

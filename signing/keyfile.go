package signing

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ParseKeys turns a comma-separated list of secrets (as found in
// AGENT_SIGNING_KEY) into keys. The first signs; the others only verify,
// which is how a key is rotated: prepend the new one, remove the old one once
// the URLs it signed have expired.
func ParseKeys(list string) ([]Key, error) {
	var keys []Key
	for i, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, err := NewKey([]byte(part))
		if err != nil {
			return nil, fmt.Errorf("key %d of the list: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("no signing key in the list")
	}
	return keys, nil
}

// LoadKeyFile reads keys from a file: one secret per line (blank lines and
// lines starting with # are ignored), the first line signing.
func LoadKeyFile(path string) ([]Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read signing key file: %w", err)
	}
	var lines []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	keys, err := ParseKeys(strings.Join(lines, ","))
	if err != nil {
		return nil, fmt.Errorf("signing key file %s: %w", path, err)
	}
	return keys, nil
}

// LoadOrCreateKeyFile loads the keys kept at path, creating the file with one
// fresh secret (mode 0600) if it does not exist. created reports whether it
// did, so the caller can warn that the key lives on local disk. Two processes
// starting at once agree on one key: the file is created exclusively.
func LoadOrCreateKeyFile(path string) (keys []Key, created bool, err error) {
	keys, err = LoadKeyFile(path)
	if err == nil {
		return keys, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	secret, err := GenerateSecret()
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("create folder for signing key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".signing-key-*")
	if err != nil {
		return nil, false, fmt.Errorf("create signing key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	content := append(bytes.Clone(secret), '\n')
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("write signing key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("sync signing key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, false, err
	}
	// Link fails if another process created the file first; then use theirs.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			keys, err = LoadKeyFile(path)
			return keys, false, err
		}
		return nil, false, fmt.Errorf("install signing key file: %w", err)
	}
	keys, err = LoadKeyFile(path)
	return keys, err == nil, err
}

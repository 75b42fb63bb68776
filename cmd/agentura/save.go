package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/filename"
)

// saveFile puts the registry file e under dir, keeping its sub-folders
// (images/chart.png → dir/images/chart.png). An existing file is never
// overwritten: the copy gets a distinct name, "chart (2).png". The file
// appears whole or not at all. It returns the path written.
func saveFile(e client.Entry, dir string) (string, error) {
	rel := filepath.FromSlash(e.Name) // a registry name is clean: no "..", no absolute path
	dst := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("save %s: %w", e.Name, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".agentura-*")
	if err != nil {
		return "", fmt.Errorf("save %s: %w", e.Name, err)
	}
	defer os.Remove(tmp.Name()) // gone once linked (or on failure)
	src, err := os.Open(e.Path)
	if err != nil {
		tmp.Close()
		return "", fmt.Errorf("save %s: %w", e.Name, err)
	}
	_, err = io.Copy(tmp, src)
	src.Close()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("save %s: %w", e.Name, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", fmt.Errorf("save %s: %w", e.Name, err)
	}
	for i := 1; i < 10000; i++ {
		cand := filepath.Join(dir, filepath.FromSlash(filename.Numbered(e.Name, i)))
		// A hard link fails if cand exists: no race with another writer, no overwrite.
		err := os.Link(tmp.Name(), cand)
		if err == nil {
			return cand, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("save %s as %s: %w", e.Name, cand, err)
		}
	}
	return "", fmt.Errorf("save %s: no free name beside %s", e.Name, dst)
}

// baseOf is the name a path is attached under.
func baseOf(p string) string { return filepath.Base(p) }

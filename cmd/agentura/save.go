package main

import (
	"fmt"
	"os"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transferclient"
)

// saveFile puts the registry file e under dir, keeping its sub-folders
// (images/chart.png → dir/images/chart.png). An existing file is never
// overwritten: the copy gets a distinct name, "chart (2).png". The file
// appears whole or not at all (transferclient.Save). It returns the path written.
func saveFile(e client.Entry, dir string) (string, error) {
	src, err := os.Open(e.Path)
	if err != nil {
		return "", fmt.Errorf("save %s: %w", e.Name, err)
	}
	defer src.Close()
	saved, err := transferclient.Save(dir, e.Name, src, 0, 0o644)
	if err != nil {
		return "", err
	}
	return saved.Path, nil
}

//go:build !windows

package install

import "path/filepath"

func defaultEndpoint(dataDir string) string { return filepath.Join(dataDir, "daemon.sock") }

func defaultACPEndpoint(dataDir string) string { return filepath.Join(dataDir, "acp.sock") }

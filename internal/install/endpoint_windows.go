//go:build windows

package install

func defaultEndpoint(dataDir string) string { return PipeName(dataDir) }

func defaultACPEndpoint(dataDir string) string { return PipeName(dataDir) + "-acp" }

//go:build windows

package install

func defaultEndpoint(dataDir string) string { return PipeName(dataDir) }

//go:build !linux

package gateway

// processFamilies is empty off Linux: the process_* families are read from /proc.
func processFamilies() []family { return nil }

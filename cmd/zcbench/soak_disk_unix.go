//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// allocated is the disk a file takes: its allocated blocks (a sparse or preallocated file differs from its size).
func allocated(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}

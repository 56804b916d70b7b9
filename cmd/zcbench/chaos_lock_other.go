//go:build !(linux || darwin)

package main

// sqliteLockHolder cannot probe POSIX locks here: ok is always false.
func sqliteLockHolder(string) (pid int, ok bool) { return 0, false }

//go:build linux || darwin

package main

import "syscall"

// sqliteLockHolder returns the pid of the process holding SQLite's SHARED lock on the database at path (a read
// lock on the 510 bytes after its pending byte, which a WAL connection keeps while it is open), 0 when none
// does; ok is false when the file cannot be probed. It only asks (F_GETLK): this process takes no lock, and it
// holds no SQLite connection to the file whose locks closing the descriptor could drop.
func sqliteLockHolder(path string) (pid int, ok bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY, 0)
	if err != nil {
		return 0, false
	}
	defer syscall.Close(fd)
	const pendingByte = 0x40000000
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Start: pendingByte + 2, Len: 510}
	if err := syscall.FcntlFlock(uintptr(fd), syscall.F_GETLK, &lk); err != nil {
		return 0, false
	}
	if lk.Type == syscall.F_UNLCK {
		return 0, true
	}
	return int(lk.Pid), true
}

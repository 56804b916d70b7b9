//go:build linux || darwin

package upload

import "syscall"

// alloc returns n zero bytes outside the Go heap: staged payloads are mapped anonymously and unmapped when
// released, so the garbage collector's heap target does not grow with them (with GOGC=100 a heap holding the
// whole budget could double before a collection) and freed uploads go back to the system at once.
func alloc(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n) // out of address space or map count: the heap still works
	}
	adviseHuge(b)
	return b
}

// free releases what alloc returned; b must not be used afterwards.
func free(b []byte) {
	if cap(b) == 0 {
		return
	}
	_ = syscall.Munmap(b[:cap(b)]) // a heap fallback is not a mapping: EINVAL, and the GC frees it
}

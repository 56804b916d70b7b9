//go:build !(linux || darwin)

package upload

// alloc returns n zero bytes on the Go heap (systems without the anonymous mappings of mem_mmap.go).
func alloc(n int) []byte { return make([]byte, n) }

// free drops b; the garbage collector reclaims it.
func free([]byte) {}

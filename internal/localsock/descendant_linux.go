//go:build linux

package localsock

import (
	"bytes"
	"os"
	"strconv"
)

// maxAncestry bounds the walk up the process tree (a pid namespace's depth is far below it).
const maxAncestry = 256

// DescendantOf reports whether pid is a child, grandchild... of ancestor, walking /proc/<pid>/stat's ppid.
// A process that double-forked and was re-parented to init (or a subreaper) is no longer one: the walk sees
// only the tree as it is now. An unreadable /proc entry ends the walk with false.
func DescendantOf(pid, ancestor int) bool {
	if pid <= 1 || ancestor <= 0 || pid == ancestor {
		return false
	}
	for i := 0; i < maxAncestry && pid > 1; i++ {
		ppid, ok := parentOf(pid)
		if !ok {
			return false
		}
		if ppid == ancestor {
			return true
		}
		pid = ppid
	}
	return false
}

// parentOf reads the ppid from /proc/<pid>/stat: "pid (comm) state ppid ...", where comm may hold spaces and
// parentheses, so the fields are taken after the last ')'.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}

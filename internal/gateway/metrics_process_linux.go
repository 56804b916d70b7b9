package gateway

import (
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
)

// The process_* families as client_golang's process collector gave them on Linux, read from /proc/self. A file
// that cannot be read leaves its families out of that scrape instead of failing it.

// userHZ is the kernel's USER_HZ, the unit of /proc's CPU times: 100 on every Linux architecture Go supports.
const userHZ = 100

func processFamilies() []family {
	var fams []family
	one := func(name, typ, help string, v float64) {
		fams = append(fams, family{name: name, typ: typ, help: help, samples: []sample{{value: v}}})
	}
	if st, ok := readProcStat(); ok {
		one("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", float64(st.utime+st.stime)/userHZ)
		one("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", float64(st.vsize))
		one("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", float64(st.rss*uint64(os.Getpagesize())))
		if boot, ok := bootTime(); ok {
			one("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", float64(boot)+float64(st.start)/userHZ)
		}
	}
	if d, err := os.Open("/proc/self/fd"); err == nil {
		names, err := d.Readdirnames(-1)
		_ = d.Close()
		if err == nil {
			one("process_open_fds", "gauge", "Number of open file descriptors.", float64(len(names)))
		}
	}
	if b, err := os.ReadFile("/proc/self/limits"); err == nil {
		if v, ok := procLimit(b, "Max open files"); ok {
			one("process_max_fds", "gauge", "Maximum number of open file descriptors.", v)
		}
		if v, ok := procLimit(b, "Max address space"); ok {
			one("process_virtual_memory_max_bytes", "gauge", "Maximum amount of virtual memory available in bytes.", v)
		}
	}
	if b, err := os.ReadFile("/proc/self/net/netstat"); err == nil {
		in, out := netstatOctets(b)
		one("process_network_receive_bytes_total", "counter", "Number of bytes received by the process over the network.", in)
		one("process_network_transmit_bytes_total", "counter", "Number of bytes sent by the process over the network.", out)
	}
	return fams
}

type procStat struct{ utime, stime, start, vsize, rss uint64 }

// readProcStat parses /proc/self/stat; the command name in parentheses may hold spaces and parentheses, so the
// fields are counted from the last ')'.
func readProcStat() (procStat, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): utime is field 14, stime 15, starttime 22, vsize 23, rss 24.
	if len(f) < 22 {
		return procStat{}, false
	}
	var st procStat
	for _, p := range []struct {
		dst *uint64
		i   int
	}{{&st.utime, 11}, {&st.stime, 12}, {&st.start, 19}, {&st.vsize, 20}, {&st.rss, 21}} {
		n, err := strconv.ParseUint(f[p.i], 10, 64)
		if err != nil {
			return procStat{}, false
		}
		*p.dst = n
	}
	return st, true
}

// bootTime is /proc/stat's btime, the seconds since the epoch the kernel booted at.
func bootTime() (uint64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// procLimit is the soft limit of one /proc/self/limits row; "unlimited" is the largest uint64, as procfs gave.
func procLimit(b []byte, name string) (float64, bool) {
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, name)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		if f[0] == "unlimited" {
			return float64(math.MaxUint64), true
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		return float64(n), err == nil
	}
	return 0, false
}

// netstatOctets are IpExt's InOctets and OutOctets in /proc/self/net/netstat: a header line of names, then a
// line of values, for each group.
func netstatOctets(b []byte) (in, out float64) {
	var header []string
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "IpExt:" {
			continue
		}
		if header == nil {
			header = f
			continue
		}
		for i := 1; i < len(f) && i < len(header); i++ {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch header[i] {
			case "InOctets":
				in = v
			case "OutOctets":
				out = v
			}
		}
		return in, out
	}
	return 0, 0
}

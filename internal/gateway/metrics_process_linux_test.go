package gateway

import (
	"math"
	"os"
	"syscall"
	"testing"
	"time"
)

// The process_* values agree with what the process finds out by other means.
func TestProcessFamiliesAgree(t *testing.T) {
	got := map[string]float64{}
	for _, f := range processFamilies() {
		got[f.name] = f.samples[0].value
	}
	if len(got) != 9 {
		t.Fatalf("%d process families, want 9: %v", len(got), got)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if got["process_max_fds"] != float64(lim.Cur) {
		t.Errorf("max_fds %v, RLIMIT_NOFILE %d", got["process_max_fds"], lim.Cur)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got["process_open_fds"] < float64(f.Fd()) {
		t.Errorf("open_fds %v, but fd %d is open", got["process_open_fds"], f.Fd())
	}
	now := float64(time.Now().Unix())
	if st := got["process_start_time_seconds"]; st > now+1 || st < now-3600 {
		t.Errorf("start_time %v, now %v: the test process did not start within the hour", st, now)
	}
	if rss := got["process_resident_memory_bytes"]; rss < 1<<20 || rss > got["process_virtual_memory_bytes"] {
		t.Errorf("rss %v (virtual %v)", rss, got["process_virtual_memory_bytes"])
	}
	if got["process_cpu_seconds_total"] < 0 || math.IsNaN(got["process_cpu_seconds_total"]) {
		t.Errorf("cpu %v", got["process_cpu_seconds_total"])
	}
}

// The /proc parsers read the rows they are after and nothing else.
func TestProcParsers(t *testing.T) {
	limits := []byte("Limit                     Soft Limit           Hard Limit           Units     \n" +
		"Max open files            1024                 524288               files     \n" +
		"Max address space         unlimited            unlimited            bytes     \n")
	if v, ok := procLimit(limits, "Max open files"); !ok || v != 1024 {
		t.Errorf("open files %v %v", v, ok)
	}
	if v, ok := procLimit(limits, "Max address space"); !ok || v != float64(math.MaxUint64) {
		t.Errorf("address space %v %v", v, ok)
	}
	if _, ok := procLimit(limits, "Max locked memory"); ok {
		t.Error("a missing row was read")
	}
	netstat := []byte("TcpExt: SyncookiesSent\nTcpExt: 0\nIpExt: InNoRoutes InOctets OutOctets\nIpExt: 0 12345 678\n")
	if in, out := netstatOctets(netstat); in != 12345 || out != 678 {
		t.Errorf("octets %v %v", in, out)
	}
	if in, out := netstatOctets([]byte("IpExt: InOctets\n")); in != 0 || out != 0 {
		t.Errorf("a header without values gave %v %v", in, out)
	}
}

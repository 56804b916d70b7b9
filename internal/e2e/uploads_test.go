package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// crashBinary is zeroclaw built with the zeroclaw_crashhooks tag, whose ZEROCLAW_TEST_CRASH_AT kills the
// process at a named point; the production binary has no such hook. Built once, on first use.
var crashBinary = sync.OnceValues(func() (string, error) {
	path := filepath.Join(filepath.Dir(binary), "zeroclaw-crashhooks")
	out, err := exec.Command("go", "build", "-tags", "zeroclaw_crashhooks", "-o", path, "../../cmd/zeroclaw").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the crash-hook binary: %v\n%s", err, out)
	}
	return path, nil
})

// startBinary is start with another executable.
func startBinary(t *testing.T, exe string, environ []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = environ
	return startCmd(t, cmd, fmt.Sprint(args))
}

func shaHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// uploadAll sends data through begin, chunks and commit, and returns the commit's reply frame.
func uploadAll(t *testing.T, c *ndjson.Client, sid, filename string, data []byte) ndjson.Frame {
	t.Helper()
	c.Request("file/upload/begin", map[string]any{"session_id": sid, "size_bytes": len(data), "filename": filename,
		"sha256": shaHex(data)}, "b")
	id, _ := c.Result("b")["upload_id"].(string)
	for off := 0; off < len(data); off += 1 << 20 {
		end := min(off+1<<20, len(data))
		c.Request("file/upload/chunk", map[string]any{"upload_id": id, "offset": off,
			"data_b64": base64.StdEncoding.EncodeToString(data[off:end])}, "c")
		if r := c.Result("c"); r["received_bytes"] != float64(end) {
			t.Fatalf("chunk at %d: %v", off, r)
		}
	}
	c.Request("file/upload/commit", map[string]any{"upload_id": id}, "commit")
	return c.Frame()
}

// killedBySIGKILL fails unless the process ended on SIGKILL.
func killedBySIGKILL(t *testing.T, p *proc) {
	t.Helper()
	p.wait(t, 20*time.Second)
	var ee *exec.ExitError
	if !errors.As(p.err, &ee) {
		t.Fatalf("daemon exit: %v, want death by SIGKILL", p.err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("daemon exit: %v, want death by SIGKILL", p.err)
	}
}

// kill -9 while a commit writes: after a restart no indexed path holds a partial file. A file being stored for the
// first time is absent (its temporary copy never got its name); a tampered file being rewritten still holds
// its previous, whole content; the next store into the directory removes the dead write's temporary files.
func TestKill9DuringUploadCommit(t *testing.T) {
	t.Parallel()
	exe, err := crashBinary()
	if err != nil {
		t.Fatal(err)
	}
	h := home(t)
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
	a := bytes.Repeat([]byte("first file, committed whole. "), 40000) // ~1.1 MB: two chunks
	b := bytes.Repeat([]byte("second file, killed mid-commit. "), 70000)

	// A normal daemon stores a; its path is indexed.
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialRPC(t, sock)
	c.Initialize()
	c.Request("session/new", map[string]any{"session_id": "k"}, 1)
	ws, _ := c.Result(1)["workspace_dir"].(string)
	f := uploadAll(t, c, "k", "a.txt", a)
	if f.Error != nil {
		t.Fatalf("commit a: %s", f.Raw)
	}
	pathA := filepath.Join(ws, "uploads", shaHex(a)+".txt")
	pathB := filepath.Join(ws, "uploads", shaHex(b)+".txt")
	signal(t, d, syscall.SIGTERM)
	d.wait(t, 20*time.Second)

	// 1. A new file: the daemon dies after writing and syncing its temporary copy, before the rename.
	crash := env(h, "ZEROCLAW_TEST_CRASH_AT=upload-commit-before-rename")
	d = startBinary(t, exe, crash, "daemon")
	waitSocket(t, d, sock)
	c = dialRPC(t, sock)
	c.Initialize()
	c.Request("session/new", map[string]any{"session_id": "k"}, 1)
	c.Result(1)
	c.Request("file/upload/begin", map[string]any{"session_id": "k", "size_bytes": len(b), "filename": "b.txt"}, "b")
	id, _ := c.Result("b")["upload_id"].(string)
	for off := 0; off < len(b); off += 1 << 20 {
		end := min(off+1<<20, len(b))
		c.Request("file/upload/chunk", map[string]any{"upload_id": id, "offset": off,
			"data_b64": base64.StdEncoding.EncodeToString(b[off:end])}, "c")
		c.Result("c")
	}
	c.Request("file/upload/commit", map[string]any{"upload_id": id}, "commit")
	killedBySIGKILL(t, d)
	if _, err := os.Lstat(pathB); !os.IsNotExist(err) {
		t.Fatalf("b is at its path after a kill before the rename: %v", err)
	}
	if temps := tempsIn(t, filepath.Join(ws, "uploads")); len(temps) != 1 {
		t.Fatalf("temporary files after the kill: %v, want the dead write's one", temps)
	}
	wantWhole(t, pathA, a)

	// 2. A tampered indexed file being rewritten: killed before the rename, it keeps its previous whole content.
	tampered := bytes.Repeat([]byte("T"), len(a))
	if err := os.WriteFile(pathA, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	d = startBinary(t, exe, crash, "daemon")
	waitSocket(t, d, sock)
	c = dialRPC(t, sock)
	c.Initialize()
	c.Request("session/new", map[string]any{"session_id": "k"}, 1)
	c.Result(1)
	c.Request("file/attach", map[string]any{"session_id": "k", "files": []map[string]any{
		{"data_b64": base64.StdEncoding.EncodeToString(a), "filename": "a.txt"}}}, 2)
	killedBySIGKILL(t, d)
	wantWhole(t, pathA, tampered)

	// 3. A normal restart: the dead writes' temporary files go with the next store; both files end up whole.
	d = start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c = dialRPC(t, sock)
	c.Initialize()
	c.Request("session/new", map[string]any{"session_id": "k"}, 1)
	c.Result(1)
	if f := uploadAll(t, c, "k", "b.txt", b); f.Error != nil {
		t.Fatalf("commit b after the restart: %s", f.Raw)
	}
	wantWhole(t, pathB, b)
	c.Request("file/attach", map[string]any{"session_id": "k", "files": []map[string]any{
		{"data_b64": base64.StdEncoding.EncodeToString(a), "filename": "a.txt"}}}, 3)
	c.Result(3)
	wantWhole(t, pathA, a)
	if temps := tempsIn(t, filepath.Join(ws, "uploads")); len(temps) != 0 {
		t.Fatalf("temporary files left after the restart's stores: %v", temps)
	}
}

// tempsIn lists the hidden temporary files in dir.
func tempsIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// wantWhole fails unless path is a regular file holding exactly want.
func wantWhole(t *testing.T, path string, want []byte) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("%s: %v %v", path, st, err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s holds %d bytes (%v), want its %d whole bytes", path, len(got), err, len(want))
	}
}

// A client that begins as many uploads as the budget takes, fills them and goes silent on open connections
// cannot push the daemon's resident memory past the upload budget plus a constant: the staged bytes are the
// budget's, further uploads are refused, and what the frames of the upload cost does not pile up on top.
func TestSilentUploaderBoundedRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Fatal("this test reads /proc/<pid>/status (Linux)")
	}
	const (
		budget = 256 << 20
		slack  = 64 << 20 // the runtime, the frames in flight (7 × 1.4 MB here) and their decode buffers
		file   = 10 << 20 // 10 MiB, within the 10 MB limit: 25 fit the budget
	)
	h := home(t)
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	pid := d.cmd.Process.Pid
	c := dialRPC(t, sock)
	c.Initialize()
	c.Request("session/new", map[string]any{"session_id": "s"}, 1)
	c.Result(1)
	t.Logf("daemon RSS at start: %d kB", procKB(t, pid, "VmRSS"))

	// 7 connections, 4 uploads each, all sending at once: 25 are staged, 3 refused.
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	enc := base64.StdEncoding.EncodeToString(chunk)
	var wg sync.WaitGroup
	var mu sync.Mutex
	staged, refused := 0, 0
	errs := make(chan error, 7)
	for range 7 {
		cl := dialRPC(t, sock)
		cl.Initialize()
		wg.Go(func() {
			for j := range 4 {
				m, err := cl.TryCall("file/upload/begin", map[string]any{"session_id": "s", "size_bytes": file}, j)
				if err != nil {
					errs <- err
					return
				}
				r, ok := m["result"].(map[string]any)
				if !ok {
					mu.Lock()
					refused++
					mu.Unlock()
					continue
				}
				mu.Lock()
				staged++
				mu.Unlock()
				id := r["upload_id"]
				for off := 0; off < file; off += 1 << 20 {
					line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"file/upload/chunk","params":{"upload_id":%q,"offset":%d,"data_b64":%q},"id":"c"}`+"\n", id, off, enc)
					if err := cl.Write([]byte(line)); err != nil {
						errs <- err
						return
					}
					if _, err := cl.Recv(ndjson.Safety); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if staged != 25 || refused != 3 {
		t.Fatalf("%d uploads staged, %d refused; want 25 and 3", staged, refused)
	}
	// Silent now, connections open. The daemon holds the budget, no more.
	hwm, rss := procKB(t, pid, "VmHWM"), procKB(t, pid, "VmRSS")
	t.Logf("daemon with the budget staged: VmRSS %d kB, peak VmHWM %d kB (limit %d kB)", rss, hwm, (budget+slack)>>10)
	if hwm > (budget+slack)>>10 {
		t.Fatalf("peak RSS %d kB exceeds the %d MiB upload budget plus %d MiB", hwm, budget>>20, slack>>20)
	}
	if rss < (budget*9/10)>>10 {
		t.Fatalf("RSS %d kB: the staged uploads are not resident, so this test measures nothing", rss)
	}
	// More begins are refused, however many connections ask.
	for i := range 3 {
		extra := dialRPC(t, sock)
		extra.Initialize()
		if m := extra.Call("file/upload/begin", map[string]any{"session_id": "s", "size_bytes": file}, i); m["error"] == nil {
			t.Fatalf("an upload beyond the budget was staged: %v", m)
		}
	}
	if hwm2 := procKB(t, pid, "VmHWM"); hwm2 > (budget+slack)>>10 {
		t.Fatalf("peak RSS %d kB after the refused begins", hwm2)
	}
}

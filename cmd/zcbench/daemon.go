package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// install is a temporary HOME holding one zeroclaw install (~/.zeroclaw) with its config.toml.
type install struct {
	home string
	root string // <home>/.zeroclaw
	sock string
}

// installOptions shape the config.toml written for an install.
type installOptions struct {
	sseURL         string // OpenAI-compatible base URL for the "sse" agent; "" for none
	maxConnections int    // rpc.max_local_connections; 0 keeps the default (512)
	gatewayPort    int    // [gateway] port on 127.0.0.1; 0 for a port the kernel picks (never another install's 42617)
	shellJobs      bool   // auto-approve shell, for scheduled jobs that run unattended
	pollSecs       int    // reliability.scheduler_poll_secs; 0 keeps the default
	sops           bool   // [sop] sops_dir = "sops" with the chaos SOP (chaos_sop.go)
	channels       string // [channels.*] and [peer_groups.*] tables (channels.go); they get a short reconnect backoff
}

// newInstall makes a fresh HOME with a short path (the socket path must fit in sun_path) and writes its config.
func newInstall(o installOptions) (*install, error) {
	home, err := os.MkdirTemp("", "zcb")
	if err != nil {
		return nil, err
	}
	in := &install{home: home, root: filepath.Join(home, ".zeroclaw")}
	in.sock = filepath.Join(in.root, "data", "daemon.sock")
	if err := os.MkdirAll(in.root, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(in.root, "config.toml"), []byte(configTOML(o)), 0o600); err != nil {
		return nil, err
	}
	if o.sops {
		if err := writeChaosSop(in.root); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func (in *install) remove() { _ = os.RemoveAll(in.home) }

func (in *install) configPath() string { return filepath.Join(in.root, "config.toml") }

// configTOML is the install's config: the offline echo provider as the default agent, and when asked an "sse"
// agent on a fake OpenAI-compatible server, a gateway on loopback and a connection limit.
func configTOML(o installOptions) string {
	var b strings.Builder
	b.WriteString("schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n")
	if o.sseURL != "" {
		fmt.Fprintf(&b, "[providers.models.openai.fake]\nuri = %q\nmodel = \"m\"\n\n", o.sseURL)
	}
	b.WriteString("[agents.default]\nmodel_provider = \"echo.default\"\nrisk_profile = \"bench\"\n\n")
	if o.sseURL != "" {
		b.WriteString("[agents.sse]\nmodel_provider = \"openai.fake\"\nrisk_profile = \"bench\"\n\n")
	}
	b.WriteString("[risk_profiles.bench]\nlevel = \"supervised\"\nworkspace_only = true\n")
	if o.shellJobs {
		b.WriteString("auto_approve = [\"shell\"]\n")
	}
	b.WriteString("\n")
	if o.maxConnections > 0 {
		fmt.Fprintf(&b, "[rpc]\nmax_local_connections = %d\n\n", o.maxConnections)
	}
	if o.gatewayPort > 0 {
		fmt.Fprintf(&b, "[gateway]\nhost = \"127.0.0.1\"\nport = %d\nrequire_pairing = false\n\n", o.gatewayPort)
	} else {
		// The default port may be another install's: a gateway that cannot bind is a doctor ERROR, and the chaos
		// run's doctor must check the databases, not trip on the port.
		b.WriteString("[gateway]\nport = 0\n\n")
	}
	if o.pollSecs > 0 || o.channels != "" {
		b.WriteString("[reliability]\n")
		if o.pollSecs > 0 {
			fmt.Fprintf(&b, "scheduler_poll_secs = %d\n", o.pollSecs)
		}
		if o.channels != "" {
			b.WriteString(channelReliability)
		}
		b.WriteString("\n")
	}
	b.WriteString(o.channels)
	if o.sops {
		b.WriteString("[sop]\nsops_dir = \"sops\"\nmax_concurrent_total = 4\n\n")
	}
	return b.String()
}

// proc is a running daemon.
type proc struct {
	cmd    *exec.Cmd
	start  time.Time
	ready  time.Duration // exec → first successful connect
	served time.Duration // exec → first status answered (on the first connection)
	done   chan struct{}
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 { // keep the tail bounded: only the last MiB matters for a failure report
		l.b.Reset()
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startDaemon execs bin on the install and waits until its socket accepts a connection (at most 30 s).
func startDaemon(bin string, in *install) (*proc, error) {
	cmd := exec.Command(bin, "daemon", "--log-level", "warn")
	cmd.Env = []string{"HOME=" + in.home, "PATH=" + os.Getenv("PATH")}
	if dir := os.Getenv("ZEROCLAW_PPROF_DIR"); dir != "" { // read only by a -tags zcprof build (cmd/zeroclaw)
		cmd.Env = append(cmd.Env, "ZEROCLAW_PPROF_DIR="+dir)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	var lastErr error
	for {
		if nc, err := net.Dial("unix", in.sock); err == nil {
			dialed := time.Since(p.start)
			c := &client{Client: ndjson.New(nil, nc)}
			var hello struct {
				ServerPID int `json:"server_pid"`
			}
			ierr := c.callInto("initialize", map[string]any{"protocol_version": 1}, &hello)
			if ierr != nil {
				// Whoever accepted went away before answering: an ephemeral daemon an operator's command started
				// while none ran, stopping as ours takes the socket over (a reset, never a status), or ours
				// exiting. Ours says which by exiting or by answering the next dial; the 30 s bound still holds.
				c.Close()
				lastErr = ierr
				select {
				case <-p.done:
					return nil, fmt.Errorf("daemon exited before serving %s (initialize: %v): %s", in.sock, ierr, lastLines(p.stderr.String(), 5))
				case <-time.After(20 * time.Millisecond):
				}
				if time.Since(p.start) > 30*time.Second {
					p.kill()
					return nil, fmt.Errorf("the daemon accepted connections but answered no initialize in 30 s: %w: %s", lastErr, lastLines(p.stderr.String(), 5))
				}
				continue
			}
			if hello.ServerPID != p.pid() {
				// Another daemon of this install serves the socket (an ephemeral one an operator's command
				// started while none ran): ours is not up, and will say so by exiting or come up after it.
				c.Close()
				select {
				case <-p.done:
					return nil, fmt.Errorf("daemon exited before serving %s: %s", in.sock, lastLines(p.stderr.String(), 5))
				case <-time.After(20 * time.Millisecond):
				}
				continue
			}
			p.ready = dialed
			if ierr == nil {
				ierr = c.callInto("status", map[string]any{}, nil)
			}
			p.served = time.Since(p.start)
			c.Close()
			if ierr != nil {
				p.kill()
				return nil, fmt.Errorf("the daemon accepted a connection but did not answer status: %w: %s", ierr, lastLines(p.stderr.String(), 5))
			}
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("daemon exited before serving %s: %s", in.sock, lastLines(p.stderr.String(), 5))
		default:
		}
		if time.Since(p.start) > 30*time.Second {
			p.kill()
			return nil, fmt.Errorf("nothing serves %s 30 s after exec", in.sock)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop asks for a clean shutdown (SIGTERM) and waits up to 20 s, then kills.
func (p *proc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if st := p.cmd.ProcessState; st != nil && !st.Success() {
			return fmt.Errorf("daemon exited with %v after SIGTERM: %s", st, lastLines(p.stderr.String(), 5))
		}
		return nil
	case <-time.After(20 * time.Second):
		p.kill()
		return errors.New("daemon did not exit within 20 s of SIGTERM")
	}
}

// rssKB reads a "<field> N kB" line (VmRSS:, RssAnon:) of /proc/<pid>/status.
func rssKB(pid int, field string) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			var kb int
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			return kb, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// client is one NDJSON connection, through the project's test client (internal/rpctest/ndjson).
type client struct {
	*ndjson.Client
	next int
}

// timeout bounds every read the harness makes: a hung daemon fails the run instead of hanging it.
const timeout = 30 * time.Second

func dial(sock string) (*client, error) {
	nc, err := net.DialTimeout("unix", sock, timeout)
	if err != nil {
		return nil, err
	}
	return &client{Client: ndjson.New(nil, nc)}, nil
}

func (c *client) Close() error { return c.Conn().Close() }

// dialInit dials and completes initialize, returning the initialize result.
func dialInit(sock string) (*client, map[string]any, error) {
	c, err := dial(sock)
	if err != nil {
		return nil, nil, err
	}
	res, err := c.call("initialize", map[string]any{"protocol_version": 1})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	var m map[string]any
	_ = json.Unmarshal(res, &m)
	return c, m, nil
}

// rpcError is a JSON-RPC error response.
type rpcError struct {
	Method string
	Err    *ndjson.Error
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s: %s", e.Method, e.Err) }

// call sends one request and reads frames until its response, skipping notifications.
func (c *client) call(method string, params any) (json.RawMessage, error) {
	c.next++
	id := c.next
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": id})
	if err != nil {
		return nil, err
	}
	if err := c.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return c.await(method, id)
}

// binaryChunk sends a binary file/upload/chunk (its line with data_len, then data, in one write) and waits for
// its response.
func (c *client) binaryChunk(uploadID string, offset int, data []byte) error {
	c.next++
	id := c.next
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"file/upload/chunk","params":{"upload_id":%q,"offset":%d,"data_len":%d},"id":%d}`+"\n",
		uploadID, offset, len(data), id)
	_ = c.Conn().SetWriteDeadline(time.Now().Add(timeout))
	bufs := net.Buffers{line, data}
	_, err := bufs.WriteTo(c.Conn())
	_ = c.Conn().SetWriteDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("file/upload/chunk: %w", err)
	}
	_, err = c.await("file/upload/chunk", id)
	return err
}

// await reads frames until the response to request id, skipping notifications.
func (c *client) await(method string, id int) (json.RawMessage, error) {
	want := fmt.Sprint(id)
	for {
		line, err := c.Recv(timeout)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var f ndjson.Frame
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			return nil, fmt.Errorf("%s: bad frame %q", method, line)
		}
		if f.Method != "" || string(f.ID) != want {
			continue
		}
		if f.Error != nil {
			return nil, &rpcError{Method: method, Err: f.Error}
		}
		return f.Result, nil
	}
}

// callInto calls and decodes the result into out.
func (c *client) callInto(method string, params, out any) error {
	res, err := c.call(method, params)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("%s: result %s: %w", method, res, err)
	}
	return nil
}

// newSession creates a chat session of agent and returns its id.
func (c *client) newSession(params map[string]any) (string, error) {
	var r struct {
		SessionID string `json:"session_id"`
	}
	if err := c.callInto("session/new", params, &r); err != nil {
		return "", err
	}
	return r.SessionID, nil
}

// turn is what one session/prompt produced, as the client saw it.
type turn struct {
	outcome string        // the prompt response's outcome ("" when it failed)
	chunks  int           // agent_message_chunk events
	events  int           // session/update notifications
	ttfc    time.Duration // prompt sent → first agent_message_chunk
	total   time.Duration // prompt sent → prompt response
}

// prompt runs one turn and reads every frame up to its response with the connection's buffered reader.
func (c *client) prompt(sid, text string) (turn, error) {
	c.next++
	id := c.next
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/prompt",
		"params": map[string]any{"session_id": sid, "prompt": text}, "id": id})
	if err != nil {
		return turn{}, err
	}
	respID := []byte(fmt.Sprintf(`"id":%d,`, id))
	var t turn
	start := time.Now()
	if err := c.Write(append(b, '\n')); err != nil {
		return t, err
	}
	r := c.Reader()
	_ = c.Conn().SetReadDeadline(time.Now().Add(timeout))
	defer c.Conn().SetReadDeadline(time.Time{})
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return t, fmt.Errorf("session/prompt: %w after %d events", err, t.events)
		}
		if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","method"`)) {
			t.events++
			if bytes.Contains(line, []byte(`"type":"agent_message_chunk"`)) {
				if t.chunks == 0 {
					t.ttfc = time.Since(start)
				}
				t.chunks++
			}
			continue
		}
		if !bytes.Contains(line, respID) {
			continue
		}
		t.total = time.Since(start)
		var f ndjson.Frame
		if err := json.Unmarshal(line, &f); err != nil {
			return t, fmt.Errorf("session/prompt: bad response %q", line)
		}
		if f.Error != nil {
			return t, &rpcError{Method: "session/prompt", Err: f.Error}
		}
		var res struct {
			Outcome string `json:"outcome"`
		}
		_ = json.Unmarshal(f.Result, &res)
		t.outcome = res.Outcome
		return t, nil
	}
}

// capabilities returns the method names the daemon's initialize result lists.
func capabilities(init map[string]any) map[string]bool {
	out := map[string]bool{}
	list, _ := init["capabilities"].([]any)
	for _, m := range list {
		if s, ok := m.(string); ok {
			out[s] = true
		}
	}
	return out
}

// cpuTime is the CPU time pid's threads have run so far: the sum of the first field of every
// /proc/PID/task/TID/schedstat (nanoseconds on the CPU). Unlike wall time it hardly moves with other load on
// the machine, so a row built on it compares two binaries on a busy machine.
func cpuTime(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, t := range tasks {
		raw, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(raw))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s/%s/schedstat: %w", dir, t.Name(), err)
		}
		sum += ns
	}
	return time.Duration(sum), nil
}

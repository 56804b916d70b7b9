package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the bare insert loop: the same driver the daemon uses
)

// The floors: what the same work costs without the daemon, measured in the same run on the same machine.

// statusReply is a status-sized answer, so the echo floor writes as many bytes as the daemon does.
const statusReply = `{"id":1,"jsonrpc":"2.0","result":{"active_sessions":0,"build_version":"0.2.0","config_dir":"/tmp/zcbXXXXXXXX/.zeroclaw","config_file":"/tmp/zcbXXXXXXXX/.zeroclaw/config.toml","config_kind":"file","data_dir":"/tmp/zcbXXXXXXXX/.zeroclaw/data","local_ipc_endpoint":"/tmp/zcbXXXXXXXX/.zeroclaw/data/daemon.sock","pid":12345,"protocol_version":1,"server_version":"0.8.6","session_ids":[],"uptime_secs":1}}` + "\n"

// server is a listener served by goroutines that close with it.
type server struct {
	ln net.Listener
	wg sync.WaitGroup
	mu sync.Mutex
	cs map[net.Conn]bool
}

// serve accepts on ln and runs handle per connection until close.
func serve(ln net.Listener, handle func(net.Conn)) *server {
	s := &server{ln: ln, cs: map[net.Conn]bool{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.cs[c] = true
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer func() { s.mu.Lock(); delete(s.cs, c); s.mu.Unlock(); c.Close() }()
				handle(c)
			}()
		}
	}()
	return s
}

func (s *server) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.cs {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// echoFloorEnv, when set, makes this executable the echo floor's server process on the socket it names.
const echoFloorEnv = "ZCBENCH_ECHO_FLOOR"

// echoProcess is the echo floor in a process of its own, as the daemon is: a round trip then crosses
// processes on both sides of the comparison. It is this executable again, with echoFloorEnv set, and it exits
// when its stdin closes (so also when zcbench dies).
type echoProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startFloorProcess starts this executable again with env added, as a floor's server: it stops when its stdin
// closes (echoProcess.stop). stdout is the process's standard output.
func startFloorProcess(env string) (*echoProcess, io.Reader, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return &echoProcess{cmd: cmd, stdin: stdin}, stdout, nil
}

func startEchoProcess(dir string) (*echoProcess, string, error) {
	path := filepath.Join(dir, "echo.sock")
	e, _, err := startFloorProcess(echoFloorEnv + "=" + path)
	if err != nil {
		return nil, "", err
	}
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return e, path, nil
		}
		if time.Since(start) > 10*time.Second {
			e.stop()
			return nil, "", fmt.Errorf("the echo floor process does not serve %s", path)
		}
	}
}

func (e *echoProcess) stop() {
	e.stdin.Close()
	_ = e.cmd.Wait()
}

// httpFloorEnv, when set, makes this executable the gateway's floor: a bare net/http server on 127.0.0.1 answering
// every request with the file it names (its first line is the Content-Type, the rest the body), in a process of
// its own as the daemon's gateway is. It prints its address on stdout and exits when its stdin closes.
const httpFloorEnv = "ZCBENCH_HTTP_FLOOR"

// startHTTPFloor starts the gateway's floor process answering contentType and body; it returns the process and
// the base URL it serves.
func startHTTPFloor(dir, contentType string, body []byte) (*echoProcess, string, error) {
	file := filepath.Join(dir, "http-floor-body")
	if err := os.WriteFile(file, append([]byte(contentType+"\n"), body...), 0o600); err != nil {
		return nil, "", err
	}
	e, stdout, err := startFloorProcess(httpFloorEnv + "=" + file)
	if err != nil {
		return nil, "", err
	}
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := bufio.NewReader(stdout).ReadString('\n')
		got <- line{s, err}
	}()
	select {
	case l := <-got:
		if l.err != nil {
			e.stop()
			return nil, "", fmt.Errorf("the HTTP floor process did not start: %w", l.err)
		}
		return e, "http://" + strings.TrimSpace(l.s), nil
	case <-time.After(10 * time.Second):
		_ = e.cmd.Process.Kill()
		e.stop()
		return nil, "", errors.New("the HTTP floor process printed no address within 10 s")
	}
}

// serveHTTPFloor is the HTTP floor process's main: serve the file's answer until stdin closes.
func serveHTTPFloor(file string) int {
	raw, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zcbench HTTP floor:", err)
		return 2
	}
	contentType, body, _ := strings.Cut(string(raw), "\n")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "zcbench HTTP floor:", err)
		return 2
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	})}
	go func() { _ = srv.Serve(ln) }()
	fmt.Println(ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = srv.Close()
	return 0
}

// serveEchoFloor is the echo floor process's main: serve path until stdin closes.
func serveEchoFloor(path string) int {
	s, _, err := echoFloor(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zcbench echo floor:", err)
		return 2
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.close()
	return 0
}

// echoFloor is the raw NDJSON echo server over a Unix socket: a line in, a status-sized line out, no JSON work.
func echoFloor(path string) (*server, string, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, "", err
	}
	reply := []byte(statusReply)
	return serve(ln, func(c net.Conn) {
		r := bufio.NewReaderSize(c, 64<<10)
		for {
			if _, err := r.ReadSlice('\n'); err != nil {
				return
			}
			if _, err := c.Write(reply); err != nil {
				return
			}
		}
	}), path, nil
}

// sinkFloor reads raw bytes over a Unix socket: each connection sends an 8-byte decimal length line, then that
// many bytes, which the server writes to a file in dir and fsyncs before answering "ok\n" — the minimal
// durable upload.
func sinkFloor(dir string) (*server, string, error) {
	path := filepath.Join(dir, "sink.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, "", err
	}
	return serve(ln, func(c net.Conn) {
		r := bufio.NewReaderSize(c, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			var n int64
			if _, err := fmt.Sscanf(line, "%d", &n); err != nil {
				return
			}
			f, err := os.CreateTemp(dir, "sink-*")
			if err != nil {
				return
			}
			_, err = io.CopyN(f, r, n)
			if err == nil {
				err = f.Sync()
			}
			f.Close()
			os.Remove(f.Name())
			if err != nil {
				return
			}
			if _, err := c.Write([]byte("ok\n")); err != nil {
				return
			}
		}
	}), path, nil
}

// sseServer is an in-process OpenAI-compatible chat completions server: a request whose body contains
// "chunks=N" gets N text deltas, each one flushed SSE event, then a usage chunk and [DONE].
func sseServer() (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := 16
		if i := strings.Index(string(body), "chunks="); i >= 0 {
			fmt.Sscanf(string(body[i+len("chunks="):]), "%d", &n)
		}
		n = max(1, min(n, 4096))
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		for i := range n {
			q, _ := json.Marshal(fmt.Sprintf("tok%d ", i))
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", q)
			fl.Flush()
		}
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", n, n+10)
		fmt.Fprint(w, "data: [DONE]\n\n")
		fl.Flush()
	})}
	go srv.Serve(ln)
	return srv, "http://" + ln.Addr().String(), nil
}

// readSSEDirect is the streaming floor: one chat completions request straight to the fake server, counting the
// text deltas as a client would parse them.
func readSSEDirect(hc *http.Client, base string, chunks int) (turn, error) {
	body := fmt.Sprintf(`{"model":"m","stream":true,"messages":[{"role":"user","content":"chunks=%d go"}]}`, chunks)
	start := time.Now()
	resp, err := hc.Post(base+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return turn{}, err
	}
	defer resp.Body.Close()
	var t turn
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Bytes()
		data, ok := strings.CutPrefix(string(line), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			break
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return t, err
		}
		t.events++
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			if t.chunks == 0 {
				t.ttfc = time.Since(start)
			}
			t.chunks++
		}
	}
	t.total = time.Since(start)
	t.outcome = "completed"
	return t, sc.Err()
}

// The bare insert loop uses the daemon's own DSN pragmas (internal/store's dsnPragmas; a test keeps the two
// equal) and a writer in BEGIN IMMEDIATE mode, as the store does.
const storePragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
	"&_pragma=foreign_keys(ON)&_pragma=journal_size_limit(8388608)"

// copySchema reads every schema object of the SQLite file at from in creation order, leaving out SQLite's own
// tables and the shadow tables an FTS5 table creates for itself.
func copySchema(ctx context.Context, from string) ([]string, error) {
	db, err := sql.Open("sqlite", from+"?_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var stmts, virtual []string
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			return nil, err
		}
		if strings.HasPrefix(name, "sqlite_") {
			continue
		}
		shadow := false
		for _, v := range virtual {
			if strings.HasPrefix(name, v+"_") {
				shadow = true
			}
		}
		if shadow {
			continue
		}
		if strings.Contains(strings.ToUpper(text), "CREATE VIRTUAL TABLE") {
			virtual = append(virtual, name)
		}
		stmts = append(stmts, text)
	}
	return stmts, rows.Err()
}

// bareAppends inserts n messages into a fresh database at path with schema, each in its own IMMEDIATE
// transaction (the row plus its session_metadata upsert, with prepared statements), and returns messages per
// second. The caller removes the database.
func bareAppends(ctx context.Context, path string, schema []string, n int) (float64, error) {
	db, err := sql.Open("sqlite", path+"?"+storePragmas+"&_txlock=immediate")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range schema {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return 0, fmt.Errorf("bare schema %q: %w", s, err)
		}
	}
	ins, err := db.PrepareContext(ctx, `INSERT INTO sessions (session_key, role, content, created_at) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	meta, err := db.PrepareContext(ctx, `INSERT INTO session_metadata (session_key, created_at, last_activity, message_count)
		VALUES (?, ?, ?, 1) ON CONFLICT(session_key) DO UPDATE SET last_activity = excluded.last_activity,
		message_count = session_metadata.message_count + 1`)
	if err != nil {
		return 0, err
	}
	defer meta.Close()
	start := time.Now()
	for i := range n {
		key := fmt.Sprintf("rpc_bench%d", i%4)
		ts := time.Now().UTC().Format(time.RFC3339Nano)
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		if _, err := tx.StmtContext(ctx, ins).ExecContext(ctx, key, "user", fmt.Sprintf("a%d go", i), ts); err != nil {
			tx.Rollback()
			return 0, err
		}
		if _, err := tx.StmtContext(ctx, meta).ExecContext(ctx, key, ts, ts); err != nil {
			tx.Rollback()
			return 0, err
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

package main

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// benchAppends: messages made durable per second by the daemon (echo turns on 4 sessions at once: each turn
// appends the prompt and the answer before its response), beside a bare insert loop on a copy of the daemon's
// own sessions.db schema (FTS triggers included) with the same pragmas.
func benchAppends(b *bench) error {
	const sec, row = "appends", "durable appends/s"
	if ok, why := b.has("session/new", "session/prompt"); !ok {
		b.res.na(sec, row, "msg/s", minRatio(0.6), why)
		return nil
	}
	// One session alone first: what one echo turn (two appends and the turn's own work) costs end to end.
	c, _, err := dialInit(b.in.sock)
	if err != nil {
		return err
	}
	sid, err := c.newSession(map[string]any{"agent_alias": "default"})
	if err != nil {
		c.Close()
		return err
	}
	var one []time.Duration
	for i := range b.n(100) {
		t, err := c.prompt(sid, fmt.Sprintf("alone a%d", i))
		if err != nil || t.outcome != "completed" {
			c.Close()
			return fmt.Errorf("echo turn: %v %q", err, t.outcome)
		}
		one = append(one, t.total)
	}
	err = c.callInto("session/close", map[string]any{"session_id": sid}, nil)
	c.Close()
	if err != nil {
		return err
	}
	b.res.add(sec, "echo turn round trip, 1 session, p50", "ms", noTarget(), percentile(durations(one, time.Millisecond), 50))

	const k = 4
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, k)
	d := b.dur(2 * time.Second)
	start := time.Now()
	for w := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, err := dialInit(b.in.sock)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			sid, err := c.newSession(map[string]any{"agent_alias": "default"})
			if err != nil {
				errs <- err
				return
			}
			for i := 0; time.Since(start) < d; i++ {
				t, err := c.prompt(sid, fmt.Sprintf("w%d a%d", w, i))
				if err != nil {
					errs <- err
					return
				}
				if t.outcome != "completed" {
					errs <- fmt.Errorf("echo turn outcome %q", t.outcome)
					return
				}
				done.Add(2)
			}
			errs <- c.callInto("session/close", map[string]any{"session_id": sid}, nil)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	rate := float64(done.Load()) / elapsed.Seconds()
	schema, err := copySchema(b.ctx, filepath.Join(b.in.root, "data", "sessions", "sessions.db"))
	if err != nil {
		return err
	}
	if len(schema) == 0 {
		return errors.New("the daemon's sessions.db has no schema to copy")
	}
	bare, err := bareAppends(b.ctx, filepath.Join(b.tmp, fmt.Sprintf("bare-%d.db", b.run)), schema, b.n(2000))
	if err != nil {
		return err
	}
	b.res.addFloor(sec, row, "msg/s", minRatio(0.6), rate, bare)
	b.res.note(sec, row, "daemon: echo turns on 4 sessions, 2 appends a turn, turn work included")
	return nil
}

// benchUploads: an 8 MiB file through file/upload/begin, chunk ×8, commit, beside writing the same bytes raw
// over a Unix socket to a server that stores and fsyncs them. The target row takes the fastest path the daemon
// advertises: binary chunks (our extension, asked for in initialize) when it offers them, else data_b64; a
// second row always measures data_b64, the path of upstream's clients, on a connection that did not ask.
func benchUploads(b *bench) error {
	const sec, row, rowB64 = "uploads", "chunked upload, 8 MiB", "chunked upload, 8 MiB, data_b64"
	if ok, why := b.has("file/upload/begin", "file/upload/chunk", "file/upload/commit"); !ok {
		b.res.na(sec, row, "MiB/s", minRatio(0.7), why)
		return nil
	}
	fast, binary, err := dialUploads(b.in.sock, true)
	if err != nil {
		return err
	}
	defer fast.Close()
	plain, _, err := dialUploads(b.in.sock, false)
	if err != nil {
		return err
	}
	defer plain.Close()
	sid, err := fast.newSession(map[string]any{"agent_alias": "default"})
	if err != nil {
		return err
	}
	defer fast.callInto("session/close", map[string]any{"session_id": sid}, nil)
	const size = 8 << 20
	reps := b.n(5)
	var fastTime, b64Time, fTime time.Duration
	for i := range reps + 1 {
		var t [3]time.Duration
		for j, c := range []*client{fast, plain, nil} {
			data := make([]byte, size)
			rand.Read(data) // fresh bytes: a repeat would be deduplicated
			if c == nil {
				if t[j], err = rawWrite(b.sink, data); err != nil {
					return err
				}
				continue
			}
			if t[j], _, err = uploadWith(c, sid, fmt.Sprintf("bench-%d-%d.bin", i, j), data, c == fast && binary); err != nil {
				return err
			}
		}
		if i > 0 { // the first warms up
			fastTime += t[0]
			b64Time += t[1]
			fTime += t[2]
		}
	}
	mibs := func(t time.Duration) float64 { return float64(reps*size) / (1 << 20) / t.Seconds() }
	b.res.addFloor(sec, row, "MiB/s", minRatio(0.7), mibs(fastTime), mibs(fTime))
	if binary {
		b.res.note(sec, row, "binary chunks (data_len, then the raw bytes; negotiated in initialize)")
	} else {
		b.res.note(sec, row, "data_b64: the daemon offers no binary chunks")
	}
	b.res.addFloor(sec, rowB64, "MiB/s", noTarget(), mibs(b64Time), mibs(fTime))
	b.res.note(sec, rowB64, "base64 in the JSON frame, as upstream's clients send")
	return nil
}

// dialUploads dials and initializes a connection for uploads; asking for binary chunks, it reports whether the
// daemon enabled them.
func dialUploads(sock string, askBinary bool) (*client, bool, error) {
	c, err := dial(sock)
	if err != nil {
		return nil, false, err
	}
	params := map[string]any{"protocol_version": 1}
	if askBinary {
		params["clientCapabilities"] = map[string]any{"binary_upload_chunks": true}
	}
	var res struct {
		Extensions []string `json:"extensions"`
	}
	if err := c.callInto("initialize", params, &res); err != nil {
		c.Close()
		return nil, false, err
	}
	return c, slices.Contains(res.Extensions, "binary_upload_chunks"), nil
}

// upload sends data through the chunked upload methods (data_b64), checks the committed entry and returns the
// time it took and the workspace path the daemon stored the file at.
func upload(c *client, sid, name string, data []byte) (time.Duration, string, error) {
	return uploadWith(c, sid, name, data, false)
}

// uploadWith is upload, with binary chunks when binary (the connection enabled them): each chunk's line carries
// data_len and is followed by the raw bytes.
func uploadWith(c *client, sid, name string, data []byte, binary bool) (time.Duration, string, error) {
	sum := sha256.Sum256(data)
	start := time.Now()
	var begin struct {
		UploadID   string `json:"upload_id"`
		ChunkBytes int    `json:"chunk_bytes"`
	}
	if err := c.callInto("file/upload/begin", map[string]any{"session_id": sid, "size_bytes": len(data),
		"filename": name, "sha256": hex.EncodeToString(sum[:])}, &begin); err != nil {
		return 0, "", err
	}
	if begin.ChunkBytes <= 0 {
		return 0, "", fmt.Errorf("file/upload/begin: chunk_bytes %d", begin.ChunkBytes)
	}
	for off := 0; off < len(data); off += begin.ChunkBytes {
		end := min(off+begin.ChunkBytes, len(data))
		if binary {
			if err := c.binaryChunk(begin.UploadID, off, data[off:end]); err != nil {
				return 0, "", err
			}
			continue
		}
		if err := c.callInto("file/upload/chunk", map[string]any{"upload_id": begin.UploadID, "offset": off,
			"data_b64": base64.StdEncoding.EncodeToString(data[off:end])}, nil); err != nil {
			return 0, "", err
		}
	}
	var commit struct {
		SizeBytes     int    `json:"size_bytes"`
		WorkspacePath string `json:"workspace_path"`
	}
	if err := c.callInto("file/upload/commit", map[string]any{"upload_id": begin.UploadID}, &commit); err != nil {
		return 0, "", err
	}
	if commit.SizeBytes != len(data) {
		return 0, "", fmt.Errorf("file/upload/commit: size_bytes %d, want %d", commit.SizeBytes, len(data))
	}
	return time.Since(start), commit.WorkspacePath, nil
}

// rawWrite sends data to the sink floor and waits for its fsync acknowledgement.
func rawWrite(sock string, data []byte) (time.Duration, error) {
	nc, err := net.DialTimeout("unix", sock, timeout)
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(timeout))
	start := time.Now()
	if _, err := fmt.Fprintf(nc, "%d\n", len(data)); err != nil {
		return 0, err
	}
	if _, err := nc.Write(data); err != nil {
		return 0, err
	}
	ack, err := bufio.NewReader(nc).ReadString('\n')
	if err != nil || ack != "ok\n" {
		return 0, fmt.Errorf("sink answered %q, %v", ack, err)
	}
	return time.Since(start), nil
}

// benchMemory: memory/search round trips over 500 stored memories.
func benchMemory(b *bench) error {
	const sec = "memory"
	if ok, why := b.has("memory/store", "memory/search"); !ok {
		b.res.na(sec, "recall p50", "µs", noTarget(), why)
		b.res.na(sec, "recall p99", "µs", noTarget(), why)
		return nil
	}
	c, _, err := dialInit(b.in.sock)
	if err != nil {
		return err
	}
	defer c.Close()
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")
	n := b.n(500)
	for i := range n {
		content := fmt.Sprintf("fact %d: %s %s %s", i, words[i%len(words)], words[(i*7)%len(words)], words[(i*13)%len(words)])
		if err := c.callInto("memory/store", map[string]any{"key": fmt.Sprintf("bench_%d_%d", b.run, i), "content": content,
			"category": "core", "agent": "default"}, nil); err != nil {
			return err
		}
	}
	var lat []time.Duration
	for i := range b.n(300) {
		q := words[i%len(words)] + " " + words[(i*5)%len(words)]
		start := time.Now()
		var r struct {
			Count int `json:"count"`
		}
		if err := c.callInto("memory/search", map[string]any{"query": q, "agent": "default", "limit": 10}, &r); err != nil {
			return err
		}
		lat = append(lat, time.Since(start))
		if r.Count == 0 {
			return fmt.Errorf("memory/search %q found nothing among %d stored memories", q, n)
		}
	}
	us := durations(lat, time.Microsecond)
	b.res.add(sec, "recall p50", "µs", noTarget(), percentile(us, 50))
	b.res.add(sec, "recall p99", "µs", noTarget(), percentile(us, 99))
	b.res.note(sec, "recall p50", fmt.Sprintf("%d memories", n))
	return nil
}

// benchMigration: legacy data/sessions/*.jsonl files imported at start: messages per second from exec until
// the socket serves and every source is archived.
func benchMigration(b *bench) error {
	const sec, row = "migration", "JSONL import"
	in, err := newInstall(installOptions{})
	if err != nil {
		return err
	}
	defer in.remove()
	dir := filepath.Join(in.root, "data", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	files, per := 10, b.n(2000)
	for f := range files {
		var s strings.Builder
		for i := range per {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			fmt.Fprintf(&s, "{\"role\":%q,\"content\":\"message %d of chat %d: %s\"}\n", role, i, f, strings.Repeat("lorem ipsum ", 6))
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("chat_%d.jsonl", f)), []byte(s.String()), 0o600); err != nil {
			return err
		}
	}
	d, err := startDaemon(b.bin, in)
	if err != nil {
		return err
	}
	defer d.stop()
	for {
		left, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if len(left) == 0 {
			break
		}
		if time.Since(d.start) > 2*time.Minute {
			return fmt.Errorf("%d legacy files still not imported after 2 minutes", len(left))
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(d.start)
	c, _, err := dialInit(in.sock)
	if err != nil {
		return err
	}
	defer c.Close()
	var m struct {
		Total int `json:"total"`
	}
	if err := c.callInto("session/messages", map[string]any{"session_id": "chat_0", "limit": 1}, &m); err != nil {
		return err
	}
	if m.Total != per {
		return fmt.Errorf("chat_0 holds %d messages after the import, want %d", m.Total, per)
	}
	b.res.add(sec, row, "msg/s", noTarget(), float64(files*per)/elapsed.Seconds())
	b.res.note(sec, row, fmt.Sprintf("%d messages in %d files, exec to all archived", files*per, files))
	return nil
}

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// runRPC is a socat replacement: it connects, performs initialize (unless --raw), then sends each stdin line as
// one frame and prints every frame the daemon sends, one per line. After stdin ends it waits until every request
// it sent has been answered (or --wait passes), then exits.
func runRPC(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "rpc", "[--config-dir DIR] [--raw] [--wait D]")
	configDir := configDirFlag(fs)
	raw := fs.Bool("raw", false, "do not send initialize first")
	wait := fs.Duration("wait", 30*time.Second, "after stdin ends, how long to wait for outstanding replies")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	endpoint, err := endpointFor(env, *configDir)
	if err != nil {
		return err
	}
	nc, err := dial(ctx, endpoint)
	if err != nil {
		return err
	}
	defer nc.Close()

	t := &rpcTracker{pending: map[string]bool{}, changed: make(chan struct{}, 1)}
	readDone := make(chan error, 1)
	go func() { readDone <- t.copyReplies(nc, env.Stdout) }()

	if !*raw {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":%d},"id":"zc-cli-init"}`, api.ProtocolVersion)
		if err := t.send(nc, []byte(line)); err != nil {
			return err
		}
	}
	sc := bufio.NewScanner(env.Stdin)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := t.send(nc, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	deadline := time.After(*wait)
	for t.outstanding() > 0 {
		select {
		case err := <-readDone:
			return err
		case <-t.changed:
		case <-deadline:
			return say("cli-rpc-unanswered", "count", t.outstanding(), "wait", *wait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// rpcTracker remembers the ids of requests sent and not yet answered.
type rpcTracker struct {
	mu      sync.Mutex // mu guards pending and out
	pending map[string]bool
	changed chan struct{}
}

func (t *rpcTracker) send(nc net.Conn, line []byte) error {
	var env struct {
		Method *string          `json:"method"`
		ID     *json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &env) == nil && env.Method != nil && env.ID != nil {
		t.mu.Lock()
		t.pending[string(compactJSON(*env.ID))] = true
		t.mu.Unlock()
	}
	_, err := nc.Write(append(append([]byte{}, line...), '\n'))
	return err
}

func (t *rpcTracker) outstanding() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

// copyReplies prints every frame; a response clears its id. Replies with id null (framing errors) clear nothing.
func (t *rpcTracker) copyReplies(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
			var env struct {
				Method *string          `json:"method"`
				ID     *json.RawMessage `json:"id"`
			}
			if json.Unmarshal(line, &env) == nil && env.Method == nil && env.ID != nil {
				t.mu.Lock()
				delete(t.pending, string(compactJSON(*env.ID)))
				t.mu.Unlock()
				select {
				case t.changed <- struct{}{}:
				default:
				}
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

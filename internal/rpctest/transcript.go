package rpctest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Transcript syntax, one directive per line:
//
//	# comment            ignored (blank lines too)
//	> {json}             the client sends this line plus "\n"
//	>q "go string"       the client sends the unquoted bytes exactly (no newline added): CRLF, invalid UTF-8...
//	< {json}             the next frame from the daemon, compared as JSON after volatile fields are normalized
//	<EOF                 the daemon closes the connection without another frame
//
// Unless the transcript ends with <EOF, the runner finally sends a sentinel request and expects its reply to be
// the very next frame, which proves the daemon sent nothing unexpected. With update set, the < lines are
// rewritten from what the daemon actually sent.

// volatile maps result keys whose values differ per run to the placeholder written in transcripts.
var volatile = map[string]string{
	"server_pid":         "<pid>",
	"pid":                "<pid>",
	"tui_id":             "<tui_id>",
	"uptime_secs":        "<uptime>",
	"connected_at":       "<time>",
	"peer_label":         "<peer>",
	"config_dir":         "<config_dir>",
	"data_dir":           "<data_dir>",
	"local_ipc_endpoint": "<endpoint>",
	"created_at":         "<time>",
	"last_activity":      "<time>",
	"session_id":         "<session_id>",
	"workspace_dir":      "<workspace>",
	"request_id":         "<request_id>",
}

const sentinel = `{"jsonrpc":"2.0","method":"status","id":"__transcript_end__"}`

// Normalize re-encodes a frame with volatile values replaced and keys sorted, for comparison.
func Normalize(frame string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(frame))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("frame is not JSON: %w: %s", err, frame)
	}
	v = normalize(v, "")
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n"), err
}

func normalize(v any, key string) any {
	if ph, ok := volatile[key]; ok {
		if str, isStr := v.(string); key == "tui_id" && isStr && !strings.HasPrefix(str, "tui-") {
			return v // a client-chosen tui_id is deterministic and worth comparing
		}
		if _, isObj := v.(map[string]any); !isObj {
			return ph
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = normalize(val, k)
		}
	case []any:
		for i := range x {
			x[i] = normalize(x[i], "")
		}
	}
	return v
}

// RunTranscript plays the transcript at path against a fresh connection to d.
func RunTranscript(t *testing.T, d *Daemon, path string, update bool) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := d.Dial(t)
	var out bytes.Buffer
	lines := strings.Split(string(src), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	sawEOF := false
	for i, line := range lines {
		no := i + 1
		switch {
		case strings.HasPrefix(line, ">q "):
			raw, err := strconv.Unquote(strings.TrimSpace(line[3:]))
			if err != nil {
				t.Fatalf("%s:%d: bad quoted string: %v", path, no, err)
			}
			c.SendRaw([]byte(raw))
			out.WriteString(line + "\n")
		case strings.HasPrefix(line, "> "):
			c.Send(line[2:])
			out.WriteString(line + "\n")
		case line == "<EOF":
			sawEOF = true
			if update {
				drainFrames(t, c, d.ConfigDir, &out)
				out.WriteString("<EOF\n")
				continue
			}
			c.ExpectEOF(10 * time.Second)
			out.WriteString(line + "\n")
		case strings.HasPrefix(line, "< "):
			if update {
				continue // regenerated from the frames read after each send
			}
			got, err := c.Recv(10 * time.Second)
			if err != nil {
				t.Fatalf("%s:%d: expected %s, got error %v", path, no, line[2:], err)
			}
			got = strings.ReplaceAll(got, d.ConfigDir, "<config_dir>")
			want, err := Normalize(line[2:])
			if err != nil {
				t.Fatalf("%s:%d: %v", path, no, err)
			}
			gotN, err := Normalize(got)
			if err != nil {
				t.Fatalf("%s:%d: %v", path, no, err)
			}
			if gotN != want {
				t.Fatalf("%s:%d: frame mismatch\n got: %s\nwant: %s", path, no, gotN, want)
			}
		default:
			out.WriteString(line + "\n")
		}
		if update && (strings.HasPrefix(line, "> ") || strings.HasPrefix(line, ">q ")) {
			drainFrames(t, c, d.ConfigDir, &out)
		}
	}
	if !sawEOF {
		c.Send(sentinel)
		got, err := c.Recv(10 * time.Second)
		if err != nil {
			t.Fatalf("%s: waiting for the end-of-transcript sentinel: %v", path, err)
		}
		if !strings.Contains(got, `"__transcript_end__"`) {
			t.Fatalf("%s: unexpected extra frame from the daemon: %s", path, got)
		}
	}
	if update {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// drainFrames reads every frame that arrives within a short quiet period (update mode only).
func drainFrames(t *testing.T, c *Client, dir string, out *bytes.Buffer) {
	for {
		got, err := c.Recv(300 * time.Millisecond)
		if err != nil {
			return
		}
		got = strings.ReplaceAll(got, dir, "<config_dir>")
		n, err := Normalize(got)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("< " + n + "\n")
	}
}

package rpctest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// Transcript syntax, one directive per line:
//
//	# comment              ignored (blank lines too)
//	> {json}               the client sends this line plus "\n"; "<session_id#2>" (any numbered kind) in it
//	                       is replaced by the real id the daemon showed as #2 earlier in the transcript
//	>q "go string"         the client sends the unquoted bytes exactly (no newline added): CRLF, invalid UTF-8...
//	< {json}               the next frame from the daemon, compared as JSON after volatile fields are normalized
//	<EOF                   the daemon closes the connection without another frame
//	> initialize           the standard handshake request, the > line of HandshakePath
//	< <initialize-result>  the standard handshake reply, the < line of HandshakePath
//
// Volatile values become placeholders: constants such as "<pid>" and "<time>", and identities numbered in
// order of first appearance in the transcript, per kind: the first session id the daemon shows is
// "<session_id#1>", the next distinct one "<session_id#2>", and the same real id is always the same number.
// The capability list of HandshakePath's reply is written "<capabilities>" wherever the daemon sends exactly
// that list, so a new method changes one file.
//
// Unless the transcript ends with <EOF, the runner finally sends a sentinel request and expects its reply to be
// the very next frame, which proves the daemon sent nothing unexpected. With update set, the < lines are
// rewritten from what the daemon actually sent.

// HandshakePath is the golden standard handshake, itself a transcript of one request and its reply.
const HandshakePath = "testdata/initialize.txt"

// volatile maps result keys whose values differ per run, and identify nothing, to their placeholder.
var volatile = map[string]string{
	"server_pid":         "<pid>",
	"pid":                "<pid>",
	"uptime_secs":        "<uptime>",
	"connected_at":       "<time>",
	"connected_at_unix":  "<unix_time>",
	"build_version":      "<build_version>",
	"config_file":        "<config_file>",
	"peer_label":         "<peer>",
	"config_dir":         "<config_dir>",
	"data_dir":           "<data_dir>",
	"local_ipc_endpoint": "<endpoint>",
	"created_at":         "<time>",
	"last_activity":      "<time>",
	"workspace_dir":      "<workspace>",
	"addr":               "<addr>", // status.gateway: the harness's gateway binds port 0
	"url":                "<url>",
}

// identities maps keys whose values name something (a string, or a list of strings) to the kind they are
// numbered as.
var identities = map[string]string{
	"session_id":          "session_id",
	"session_ids":         "session_id",
	"session_key":         "session_id",
	"request_id":          "request_id",
	"tui_id":              "tui_id",
	"turn_id":             "turn_id",
	"interrupted_turn_id": "turn_id",
	"run_id":              "run_id",
	"subscription_id":     "subscription_id",
}

const sentinel = `{"jsonrpc":"2.0","method":"status","id":"__transcript_end__"}`

// generatedTUIID matches the tui ids the daemon makes up.
var generatedTUIID = regexp.MustCompile(`^tui_[0-9a-f]{8}$`)

// numbered matches a numbered placeholder in a send line.
var numbered = regexp.MustCompile(`<([a-z_]+)#([0-9]+)>`)

// normalizer rewrites one transcript's frames: it numbers the identities it sees and replaces the known
// capability list.
type normalizer struct {
	num          map[string]map[string]int // kind → real value → its number
	val          map[string][]string       // kind → real values, number 1 first
	capabilities string                    // the golden capability list as compact JSON; "" replaces nothing
	identities   map[string]string         // more keys naming something, besides the package's identities
}

func newNormalizer(capabilities string) *normalizer {
	return &normalizer{num: map[string]map[string]int{}, val: map[string][]string{}, capabilities: capabilities}
}

// placeholder returns the numbered placeholder of value, numbering it if it is new.
func (n *normalizer) placeholder(kind, value string) string {
	if n.num[kind] == nil {
		n.num[kind] = map[string]int{}
	}
	no, ok := n.num[kind][value]
	if !ok {
		n.val[kind] = append(n.val[kind], value)
		no = len(n.val[kind])
		n.num[kind][value] = no
	}
	return fmt.Sprintf("<%s#%d>", kind, no)
}

// resolve replaces each numbered placeholder in a send line with the real value, JSON-escaped.
func (n *normalizer) resolve(line string) (string, error) {
	var err error
	out := numbered.ReplaceAllStringFunc(line, func(ph string) string {
		m := numbered.FindStringSubmatch(ph)
		no, _ := strconv.Atoi(m[2])
		vals := n.val[m[1]]
		if no < 1 || no > len(vals) {
			if err == nil {
				err = fmt.Errorf("%s: the daemon has shown only %d %s value(s) so far", ph, len(vals), m[1])
			}
			return ph
		}
		b, _ := json.Marshal(vals[no-1])
		return string(b[1 : len(b)-1])
	})
	return out, err
}

// got normalizes a frame the daemon sent: volatile values replaced, identities numbered (walking keys in
// sorted order, so numbering does not depend on map order), keys sorted.
func (n *normalizer) got(frame string) (string, error) {
	return n.encode(frame, true)
}

// want canonicalizes an expected frame from a transcript: keys sorted, the golden capability list replaced.
func (n *normalizer) want(frame string) (string, error) {
	return n.encode(frame, false)
}

func (n *normalizer) encode(frame string, volatileToo bool) (string, error) {
	dec := json.NewDecoder(strings.NewReader(frame))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("frame is not JSON: %w: %s", err, frame)
	}
	v = n.walk(v, "", volatileToo)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n"), err
}

func (n *normalizer) walk(v any, key string, volatileToo bool) any {
	if key == "capabilities" && n.capabilities != "" {
		if b, err := json.Marshal(v); err == nil && string(b) == n.capabilities {
			return "<capabilities>"
		}
	}
	if volatileToo {
		if ph, ok := volatile[key]; ok {
			if _, isObj := v.(map[string]any); !isObj {
				return ph
			}
		}
		kind, ok := identities[key]
		if !ok {
			kind, ok = n.identities[key]
		}
		if ok {
			switch x := v.(type) {
			case string:
				if key == "tui_id" && !generatedTUIID.MatchString(x) {
					return v // a client-chosen tui_id is deterministic and worth comparing
				}
				return n.placeholder(kind, x)
			case []any:
				for i, e := range x {
					if s, isStr := e.(string); isStr {
						x[i] = n.placeholder(kind, s)
					}
				}
				return x
			}
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			x[k] = n.walk(x[k], k, volatileToo)
		}
	case []any:
		for i := range x {
			x[i] = n.walk(x[i], "", volatileToo)
		}
	}
	return v
}

// handshake is the golden standard handshake.
type handshake struct {
	request      string // the > line's JSON
	reply        string // the < line's JSON
	capabilities string // the reply's capability list as compact JSON
}

// loadHandshake reads HandshakePath (relative to the test's directory).
func loadHandshake() (handshake, error) {
	src, err := os.ReadFile(HandshakePath)
	if err != nil {
		return handshake{}, err
	}
	var h handshake
	for line := range strings.SplitSeq(string(src), "\n") {
		switch {
		case strings.HasPrefix(line, "> ") && h.request == "":
			h.request = line[2:]
		case strings.HasPrefix(line, "< ") && h.reply == "":
			h.reply = line[2:]
		}
	}
	var r struct {
		Result struct {
			Capabilities json.RawMessage `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(h.reply), &r); err != nil || len(r.Result.Capabilities) == 0 {
		return handshake{}, fmt.Errorf("%s: want one > line and one < line holding a result with capabilities (%v)", HandshakePath, err)
	}
	var caps []any
	if err := json.Unmarshal(r.Result.Capabilities, &caps); err != nil {
		return handshake{}, fmt.Errorf("%s: capabilities: %w", HandshakePath, err)
	}
	b, _ := json.Marshal(caps)
	h.capabilities = string(b)
	return h, nil
}

// RunTranscript plays the transcript at path against a fresh connection to d; with update it rewrites the
// transcript's < lines from what the daemon sent.
func RunTranscript(t *testing.T, d *Daemon, path string, update bool) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var hs handshake // the golden file itself shows the whole reply, capability list included
	if path != HandshakePath {
		if hs, err = loadHandshake(); err != nil {
			t.Fatal(err)
		}
	}
	out, err := play(d.Dial(t), d.ConfigDir, string(src), hs, update)
	if err != nil {
		t.Fatalf("%s:%v", path, err)
	}
	if update {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Wire is one connection a transcript plays on: the daemon's socket (an ndjson.Client) or a WebSocket of the
// gateway carrying one frame per message.
type Wire interface {
	// Write sends b as it is (a socket) or as one message without its final newline (a WebSocket).
	Write(b []byte) error
	// Recv returns the next frame; io.EOF once the daemon has closed the connection.
	Recv(timeout time.Duration) (string, error)
}

// Dialect is what differs between the protocols a transcript can speak.
type Dialect struct {
	// Sentinel is a request whose reply, carrying the id "__transcript_end__", must be the frame after the
	// transcript's last; "" means the protocol has none, and the daemon must then stay silent for a while.
	Sentinel string
	// Identities adds keys naming something to the ones numbered in every transcript (identities).
	Identities map[string]string
}

// native is the dialect of the daemon's socket.
var native = Dialect{Sentinel: sentinel}

// quiet is how long a transcript without a sentinel waits for an unexpected frame, and how long -update waits
// for the frames a send causes.
const quiet = 300 * time.Millisecond

// play runs a native transcript on c; see PlayOn.
func play(c *ndjson.Client, configDir, src string, hs handshake, update bool) ([]byte, error) {
	return playOn(c, native, configDir, src, hs, update)
}

// playOn runs a transcript on c and returns the transcript as the daemon's frames would write it. An error
// starts with the transcript's line number.
func playOn(c Wire, dia Dialect, configDir, src string, hs handshake, update bool) ([]byte, error) {
	n := newNormalizer(hs.capabilities)
	n.identities = dia.Identities
	var out bytes.Buffer
	lines := strings.Split(src, "\n")
	if k := len(lines); k > 0 && lines[k-1] == "" {
		lines = lines[:k-1]
	}
	normalize := func(got string) (string, error) {
		return n.got(strings.ReplaceAll(got, configDir, "<config_dir>"))
	}
	// drain records every frame that arrives within a short quiet period (update mode only); after
	// "> initialize" the reply equal to the golden one is written as "< <initialize-result>".
	drain := func(handshakeSent bool) error {
		for first := true; ; first = false {
			raw, err := c.Recv(quiet)
			if err != nil {
				return nil // quiet, or closed: <EOF says which
			}
			got, err := normalize(raw)
			if err != nil {
				return err
			}
			if want, _ := n.want(hs.reply); first && handshakeSent && got == want {
				got = "<initialize-result>"
			}
			out.WriteString("< " + got + "\n")
		}
	}
	sawEOF := false
	for i, line := range lines {
		no := i + 1
		switch {
		case strings.HasPrefix(line, ">q "):
			raw, err := strconv.Unquote(strings.TrimSpace(line[3:]))
			if err != nil {
				return nil, fmt.Errorf("%d: bad quoted string: %v", no, err)
			}
			if err := c.Write([]byte(raw)); err != nil {
				return nil, fmt.Errorf("%d: write: %v", no, err)
			}
			out.WriteString(line + "\n")
		case strings.HasPrefix(line, "> "):
			send := line[2:]
			if send == "initialize" {
				send = hs.request
			}
			send, err := n.resolve(send)
			if err != nil {
				return nil, fmt.Errorf("%d: %v", no, err)
			}
			if err := c.Write([]byte(send + "\n")); err != nil {
				return nil, fmt.Errorf("%d: write: %v", no, err)
			}
			out.WriteString(line + "\n")
		case line == "<EOF":
			sawEOF = true
			if update {
				if err := drain(false); err != nil {
					return nil, fmt.Errorf("%d: %v", no, err)
				}
				out.WriteString("<EOF\n")
				continue
			}
			if got, err := c.Recv(10 * time.Second); err == nil {
				return nil, fmt.Errorf("%d: expected EOF, got frame %s", no, got)
			} else if !errors.Is(err, io.EOF) && !isReset(err) {
				return nil, fmt.Errorf("%d: expected EOF, got %v", no, err)
			}
			out.WriteString(line + "\n")
		case strings.HasPrefix(line, "< "):
			if update {
				continue // regenerated from the frames read after each send
			}
			expect := line[2:]
			if expect == "<initialize-result>" {
				expect = hs.reply
			}
			want, err := n.want(expect)
			if err != nil {
				return nil, fmt.Errorf("%d: %v", no, err)
			}
			raw, err := c.Recv(10 * time.Second)
			if err != nil {
				return nil, fmt.Errorf("%d: expected %s, got error %v", no, want, err)
			}
			got, err := normalize(raw)
			if err != nil {
				return nil, fmt.Errorf("%d: %v", no, err)
			}
			if got != want {
				return nil, fmt.Errorf("%d: frame mismatch\n got: %s\nwant: %s", no, got, want)
			}
		default:
			out.WriteString(line + "\n")
		}
		if update && (strings.HasPrefix(line, "> ") || strings.HasPrefix(line, ">q ")) {
			if err := drain(line == "> initialize"); err != nil {
				return nil, fmt.Errorf("%d: %v", no, err)
			}
		}
	}
	if !sawEOF && dia.Sentinel == "" && !update {
		if got, err := c.Recv(quiet); err == nil {
			return nil, fmt.Errorf(" unexpected extra frame from the daemon: %s", got)
		}
	}
	if !sawEOF && dia.Sentinel != "" {
		if err := c.Write([]byte(dia.Sentinel + "\n")); err != nil {
			return nil, fmt.Errorf(" writing the end-of-transcript sentinel: %v", err)
		}
		got, err := c.Recv(10 * time.Second)
		if err != nil {
			return nil, fmt.Errorf(" waiting for the end-of-transcript sentinel: %v", err)
		}
		if !strings.Contains(got, `"__transcript_end__"`) {
			return nil, fmt.Errorf(" unexpected extra frame from the daemon: %s", got)
		}
	}
	return out.Bytes(), nil
}

// isReset reports a connection the daemon reset rather than closed: it does when it closes with unread input.
func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe")
}

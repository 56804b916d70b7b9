package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// wantFail runs the binary and checks that it exits 1 with every piece of want on stderr and no JSON-RPC
// framing there; it returns stderr.
func wantFail(t *testing.T, environ []string, want []string, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, environ, "", args...)
	if code != 1 {
		t.Fatalf("%v: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			t.Fatalf("%v: stderr lacks %q:\n%s", args, w, errOut)
		}
	}
	if strings.Contains(errOut, "jsonrpc") || strings.Contains(errOut, "-326") {
		t.Fatalf("%v: protocol noise on stderr:\n%s", args, errOut)
	}
	return errOut
}

// The real binary: what the operator reads when something is not there is an error (exit 1) in one clean
// line with a hint; cron jobs are named by name as the tools allow.
func TestCLINotFoundAndCleanErrors(t *testing.T) {
	t.Parallel()
	h, _ := cronHome(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	wantFail(t, env(h), []string{"Error: memory get: ", "Memory key `nope` not found", "Try: zeroclaw memory list"}, "memory", "get", "nope")
	wantFail(t, env(h), []string{"Error: memory forget: ", "Memory key `nope` not found", "Try: zeroclaw memory list"}, "memory", "forget", "nope")

	// A bad schedule: one line, no repeated package prefixes, and a hint with a working example.
	errOut := wantFail(t, env(h), []string{"Error: cron add: invalid job: invalid schedule: ", "Try: zeroclaw cron add --cron"},
		"cron", "add", "--cron", "not a schedule", "--command", "true")
	if strings.Contains(errOut, "cron: ") || strings.Count(errOut, "\n") != 2 {
		t.Fatalf("cron add error is not one clean line and a hint:\n%s", errOut)
	}

	// By name, case-insensitively: trigger, runs, remove.
	runOK(t, env(h), "", "cron", "add", "--every", "1h", "--command", "echo by name", "--name", "Nightly")
	if out := runOK(t, env(h), "", "cron", "trigger", "nightly"); !strings.Contains(out, "by name") {
		t.Fatalf("cron trigger by name:\n%s", out)
	}
	if out := runOK(t, env(h), "", "cron", "runs", "Nightly"); !strings.Contains(out, "ok") {
		t.Fatalf("cron runs by name:\n%s", out)
	}
	if out := runOK(t, env(h), "", "cron", "remove", "NIGHTLY"); !regexp.MustCompile(`^removed job [0-9a-f-]{36}\n$`).MatchString(out) {
		t.Fatalf("cron remove by name: %q", out)
	}
	wantFail(t, env(h), []string{"Error: cron trigger: ", `no cron job with id or name "nightly"`, "Try: zeroclaw cron list"}, "cron", "trigger", "nightly")

	// Unknown names get a did-you-mean.
	wantFail(t, env(h), []string{`unknown command "sesions"`, "did you mean sessions?"}, "sesions")
	wantFail(t, env(h), []string{`unknown subcommand "lsit"`, "did you mean zeroclaw cron list?"}, "cron", "lsit")
	wantFail(t, env(h), []string{"unknown property", "did you mean agents.default.risk_profile?"}, "config", "set", "agents.default.risk_profle", "x")
}

// The real binary: sessions show takes an id or a unique prefix, refuses an unknown id and an ambiguous
// prefix (exit 1), lists titles, and shows a tool turn as text rather than its stored JSON.
func TestCLISessionsShowAndList(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	runOK(t, env(h), "", "agent", "--session", "abcd-one", "-m", `/tool memory_store {"key":"city","content":"Lisbon"}`)
	runOK(t, env(h), "", "agent", "--session", "abcd-two", "-m", "second\nline")

	out := runOK(t, env(h), "", "sessions", "show", "abcd-o")
	for _, want := range []string{`[0] user: /tool memory_store {"key":"city","content":"Lisbon"}`,
		`[1] assistant: → memory_store {"key":"city","content":"Lisbon"}`, "[2] tool memory_store: Stored memory: city"} {
		if !strings.Contains(out, want) {
			t.Fatalf("sessions show by prefix lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "zeroclaw_tool") {
		t.Fatalf("raw tool JSON shown:\n%s", out)
	}
	wantFail(t, env(h), []string{`no session "nope"`, "Try: zeroclaw sessions list"}, "sessions", "show", "nope")
	wantFail(t, env(h), []string{`"abcd" is the prefix of 2 sessions`, "abcd-one", "abcd-two"}, "sessions", "show", "abcd")

	list := runOK(t, env(h), "", "sessions", "list")
	if !strings.Contains(list, "TITLE") || !regexp.MustCompile(`abcd-two .*second …`).MatchString(list) ||
		!regexp.MustCompile(`abcd-one .*/tool memory_store`).MatchString(list) {
		t.Fatalf("sessions list titles:\n%s", list)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(runOK(t, env(h), "", "sessions", "list", "--json")), &rows); err != nil || len(rows) != 2 || rows[0]["title"] == "" {
		t.Fatalf("sessions list --json: %v %v", rows, err)
	}
	runOK(t, env(h), "", "sessions", "delete", "abcd-t")
	wantFail(t, env(h), []string{`no session "abcd-two"`}, "sessions", "show", "abcd-two")
}

// The real binary with no daemon running: logs, costs and cron list answer from the install's files instead
// of "no daemon is running", without starting one; costs fills the per-day token columns, prices a known model
// and names an unpriced one.
func TestCLIOfflineReads(t *testing.T) {
	t.Parallel()
	h, root := cronHome(t)
	sock := agentSock(h)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	runOK(t, env(h), "", "agent", "-m", "hello")
	runOK(t, env(h), "", "cron", "add", "--every", "1h", "--command", "true", "--name", "offline-job")
	runOK(t, env(h), "", "stop")
	if c := d.wait(t, 15*time.Second); c != 0 {
		t.Fatalf("daemon exit %d", c)
	}
	// A priced model's record, as a provider request of gpt-4o-mini would leave it.
	ledger := filepath.Join(root, "data", "state", "costs.jsonl")
	f, err := os.OpenFile(ledger, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Now().UTC().Format("2006-01-02")
	_, err = f.WriteString(`{"id":"r-priced","session_id":"s","agent_alias":"default","usage":{"model":"gpt-4o-mini","input_tokens":1000000,` +
		`"output_tokens":1000000,"total_tokens":2000000,"cost_usd":0.75,"timestamp":"` + day + `T00:00:01Z"}}` + "\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, code := run(t, env(h), "", "logs")
	if code != 0 || !strings.Contains(out, "agent/complete/success") || !strings.Contains(errOut, "no daemon is running: read from the install's files") {
		t.Fatalf("offline logs: exit %d\n%s\n%s", code, out, errOut)
	}
	// One spelling across commands: --limit, as sessions, memory and cron runs take it (-n stays).
	for _, flag := range []string{"--limit", "-n"} {
		if out := runOK(t, env(h), "", "logs", flag, "1"); strings.Count(out, "\n") != 1 {
			t.Fatalf("logs %s 1:\n%s", flag, out)
		}
	}
	out, errOut, code = run(t, env(h), "", "cron", "list")
	if code != 0 || !strings.Contains(out, "offline-job") {
		t.Fatalf("offline cron list: exit %d\n%s\n%s", code, out, errOut)
	}
	var jobs []map[string]any
	if err := json.Unmarshal([]byte(runOK(t, env(h), "", "cron", "list", "--json")), &jobs); err != nil || len(jobs) != 1 || jobs[0]["name"] != "offline-job" {
		t.Fatalf("offline cron list --json: %v %v", jobs, err)
	}
	out, errOut, code = run(t, env(h), "", "costs")
	// The day's row: 2 requests, input and output filled (the echo turn's tokens plus the priced record's).
	m := regexp.MustCompile(`(?m)^\s*` + day + `\s+2\s+(\d+)\s+(\d+)\s+\d+\s+0\.7500\s*$`).FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] == "0" || m[2] == "0" || !strings.Contains(out, "unpriced (recorded at $0, not counted by the budgets): echo") {
		t.Fatalf("offline costs: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("an offline read left a daemon socket: %v", err)
	}
}

// The real binary: help goes to stdout with exit 0, for the whole CLI, a command group and a subcommand;
// a listing prints JSON with --json.
func TestCLIHelpOnStdoutAndJSON(t *testing.T) {
	t.Parallel()
	h := home(t)
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"help", "cron"}, {"cron", "--help"}, {"memory", "help"},
		{"sessions", "show", "-h"}, {"logs", "--help"}, {"config", "-h"}, {"pair", "list", "-h"}} {
		out, errOut, code := run(t, env(h), "", args...)
		if code != 0 || !strings.Contains(out, "Usage: zeroclaw") || errOut != "" {
			t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
	}
	if _, errOut, code := run(t, env(h), "", "cron"); code != 2 || !strings.Contains(errOut, "Usage: zeroclaw cron") {
		t.Fatalf("cron without a subcommand: exit %d %q", code, errOut)
	}

	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	runOK(t, env(h), "", "agent", "-m", `/tool memory_store {"key":"color","content":"teal"}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"memory", "list", "--json"}, `"key": "color"`},
		{[]string{"memory", "search", "teal", "--json"}, `"key": "color"`},
		{[]string{"memory", "get", "color", "--json"}, `"content": "teal"`},
		{[]string{"pair", "list", "--json"}, `[]`},
		{[]string{"cron", "list", "--json"}, `[]`},
	} {
		out := runOK(t, env(h), "", c.args...)
		if !json.Valid([]byte(out)) || !strings.Contains(out, c.want) {
			t.Fatalf("%v: %s", c.args, out)
		}
	}
}

// The real binary: a daemon started on a config.toml or .secret_key that other users may read says so once
// per file at start, with the fix; a private install gets no such warning.
func TestDaemonWarnsAboutReadableSecrets(t *testing.T) {
	t.Parallel()
	h, root := cronHome(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	runOK(t, env(h), "", "stop")
	d.wait(t, 15*time.Second)
	if strings.Contains(d.stderr.String(), "readable by other users") {
		t.Fatalf("a private install was warned about:\n%s", d.stderr.String())
	}
	key := filepath.Join(root, ".secret_key")
	if _, err := os.Stat(key); err != nil {
		if err := os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for path, mode := range map[string]os.FileMode{filepath.Join(root, "config.toml"): 0o644, key: 0o640} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	d = start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	logs := d.stderr.String()
	for _, want := range []string{`path=` + filepath.Join(root, "config.toml") + ` mode=0644 fix="chmod 600 ` + filepath.Join(root, "config.toml") + `"`,
		`path=` + key + ` mode=0640`} {
		if strings.Count(logs, want) != 1 {
			t.Fatalf("want one warning with %q:\n%s", want, logs)
		}
	}
}

// One flag spelling across commands: agent takes --agent like costs, cron and memory, and --message beside -m;
// the short forms still work.
func TestCLIAgentFlagSpellings(t *testing.T) {
	t.Parallel()
	h := home(t)
	for _, args := range [][]string{
		{"agent", "--agent", "default", "--message", "long spelling"},
		{"agent", "-a", "default", "-m", "short spelling"},
	} {
		if out := runOK(t, env(h), "", args...); !strings.Contains(out, args[len(args)-1]) {
			t.Fatalf("%v: the answer does not echo the message:\n%s", args, out)
		}
	}
}

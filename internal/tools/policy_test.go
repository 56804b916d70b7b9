package tools

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDecideRiskTable(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	outsideFile := filepath.Join(s.outside, "outside.txt")
	mustSymlink(t, s.outside, filepath.Join(s.ws, "escape"))
	forbidden := []string{"secret", filepath.Join(s.outside, "private")}

	type want struct {
		risk                  Risk
		readonly, super, full Verdict
	}
	cases := []struct {
		name          string
		call          Call
		workspaceOnly bool
		want          want
	}{
		{"file_read inside", call("file_read", map[string]any{"path": "inside.txt"}), true, want{RiskLow, Run, Run, Run}},
		{"file_list workspace", call("file_list", nil), true, want{RiskLow, Run, Run, Run}},
		{"file_list sub", call("file_list", map[string]any{"path": "sub"}), true, want{RiskLow, Run, Run, Run}},
		{"time", call("time", nil), true, want{RiskLow, Run, Run, Run}},
		{"ask_user", call("ask_user", map[string]any{"question": "ok?", "choices": []string{"y", "n"}}), true, want{RiskLow, Run, Run, Run}},
		{"shell", call("shell", map[string]any{"command": "echo hi"}), true, want{RiskMedium, Refuse, Ask, Run}},
		{"file_write inside", call("file_write", map[string]any{"path": "new/dir/f.txt", "content": "x"}), true, want{RiskMedium, Refuse, Ask, Run}},
		{"shell blocked", call("shell", map[string]any{"command": "rm -rf /"}), true, want{RiskHigh, Refuse, Refuse, Refuse}},
		{"shell blocked in a list", call("shell", map[string]any{"command": "ls; sudo reboot"}), true, want{RiskHigh, Refuse, Refuse, Refuse}},
		{"file_read outside, workspace_only", call("file_read", map[string]any{"path": outsideFile}), true, want{RiskHigh, Refuse, Refuse, Run}},
		{"file_read dotdot, workspace_only", call("file_read", map[string]any{"path": "../outside/outside.txt"}), true, want{RiskHigh, Refuse, Refuse, Run}},
		{"file_read symlink escape, workspace_only", call("file_read", map[string]any{"path": "escape/outside.txt"}), true, want{RiskHigh, Refuse, Refuse, Run}},
		{"file_list outside, workspace_only", call("file_list", map[string]any{"path": s.outside}), true, want{RiskHigh, Refuse, Refuse, Run}},
		{"file_write outside, workspace_only", call("file_write", map[string]any{"path": "escape/x.txt", "content": "x"}), true, want{RiskHigh, Refuse, Refuse, Run}},
		{"file_read outside", call("file_read", map[string]any{"path": outsideFile}), false, want{RiskLow, Run, Run, Run}},
		{"file_write outside", call("file_write", map[string]any{"path": "escape/x.txt", "content": "x"}), false, want{RiskMedium, Refuse, Ask, Run}},
		{"file_read forbidden", call("file_read", map[string]any{"path": "secret/key.txt"}), false, want{RiskHigh, Refuse, Refuse, Refuse}},
		{"file_list forbidden dir", call("file_list", map[string]any{"path": "./sub/../secret"}), true, want{RiskHigh, Refuse, Refuse, Refuse}},
		{"file_write forbidden outside", call("file_write", map[string]any{"path": filepath.Join(s.outside, "private", "a"), "content": "x"}), false, want{RiskHigh, Refuse, Refuse, Refuse}},
		{"cron_list", call("cron_list", nil), true, want{RiskLow, Run, Run, Run}},
		{"cron_runs", call("cron_runs", map[string]any{"job_id": "j"}), true, want{RiskLow, Run, Run, Run}},
		{"cron_add", call("cron_add", map[string]any{"schedule": map[string]any{"kind": "every", "every_ms": 60000}, "command": "ls"}), true, want{RiskMedium, Refuse, Ask, Run}},
		{"cron_update", call("cron_update", map[string]any{"job_id": "j", "patch": map[string]any{"enabled": false}}), true, want{RiskMedium, Refuse, Ask, Run}},
		{"cron_remove", call("cron_remove", map[string]any{"job_id": "j"}), true, want{RiskMedium, Refuse, Ask, Run}},
		{"cron_run", call("cron_run", map[string]any{"job_id": "j"}), true, want{RiskMedium, Refuse, Ask, Run}},
		{"delegate", call("delegate", map[string]any{"agent": "b", "prompt": "p"}), true, want{RiskMedium, Refuse, Ask, Run}},
		{"delegate check_result", call("delegate", map[string]any{"action": "check_result", "task_id": "x"}), true, want{RiskLow, Run, Run, Run}},
		{"file_read forbidden via symlink", call("file_read", map[string]any{"path": "escape/private/a"}), false, want{RiskHigh, Refuse, Refuse, Refuse}},
		{"sop_list", call("sop_list", nil), true, want{RiskLow, Run, Run, Run}},
		{"sop_status", call("sop_status", map[string]any{"run_id": "r"}), true, want{RiskLow, Run, Run, Run}},
		{"sop_execute", call("sop_execute", map[string]any{"name": "deploy"}), true, want{RiskMedium, Refuse, Ask, Run}},
		{"sop_advance", call("sop_advance", map[string]any{"run_id": "r", "status": "completed", "output": "ok"}), true, want{RiskMedium, Refuse, Ask, Run}},
		{"sop_approve", call("sop_approve", map[string]any{"run_id": "r"}), true, want{RiskMedium, Refuse, Ask, Run}},
		{"sop_advance bad status", call("sop_advance", map[string]any{"run_id": "r", "status": "done", "output": "ok"}), true, want{RiskHigh, Refuse, Refuse, Refuse}},
		{"sop_execute no name", call("sop_execute", map[string]any{"payload": "{}"}), true, want{RiskHigh, Refuse, Refuse, Refuse}},
	}
	for _, tc := range cases {
		for _, lv := range []struct {
			level Level
			want  Verdict
		}{{LevelReadOnly, tc.want.readonly}, {LevelSupervised, tc.want.super}, {LevelFull, tc.want.full}} {
			t.Run(tc.name+"/"+string(lv.level), func(t *testing.T) {
				p := Policy{Level: lv.level, WorkspaceOnly: tc.workspaceOnly, ForbiddenPaths: forbidden}
				d := p.Decide(tc.call, s.ws)
				if d.Verdict != lv.want || d.Risk != tc.want.risk {
					t.Fatalf("Decide = %v/%s (%s), want %v/%s", d.Verdict, d.Risk, d.Reason, lv.want, tc.want.risk)
				}
				if d.Reason == "" {
					t.Fatal("empty reason")
				}
			})
		}
	}
}

func TestDecideAutoApproveAndAlwaysAsk(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	shell := call("shell", map[string]any{"command": "make test"})
	write := call("file_write", map[string]any{"path": "f.txt", "content": "x"})
	blocked := call("shell", map[string]any{"command": "mkfs.ext4 /dev/sda1"})
	read := call("file_read", map[string]any{"path": "inside.txt"})
	outside := call("file_read", map[string]any{"path": filepath.Join(s.outside, "outside.txt")})
	cases := []struct {
		name string
		p    Policy
		c    Call
		want Verdict
	}{
		{"supervised auto_approve shell runs", Policy{Level: LevelSupervised, AutoApprove: []string{"shell"}}, shell, Run},
		{"supervised auto_approve is per tool", Policy{Level: LevelSupervised, AutoApprove: []string{"shell"}}, write, Ask},
		{"supervised auto_approve never runs blocked", Policy{Level: LevelSupervised, AutoApprove: []string{"shell"}}, blocked, Refuse},
		{"supervised auto_approve never runs outside", Policy{Level: LevelSupervised, WorkspaceOnly: true, AutoApprove: []string{"file_read"}}, outside, Refuse},
		{"readonly ignores auto_approve", Policy{Level: LevelReadOnly, AutoApprove: []string{"shell"}}, shell, Refuse},
		{"always_ask low under readonly", Policy{Level: LevelReadOnly, AlwaysAsk: []string{"file_read"}}, read, Ask},
		{"always_ask low under full", Policy{Level: LevelFull, AlwaysAsk: []string{"file_read"}}, read, Ask},
		{"always_ask medium under full", Policy{Level: LevelFull, AlwaysAsk: []string{"shell"}}, shell, Ask},
		{"always_ask beats auto_approve", Policy{Level: LevelSupervised, AutoApprove: []string{"shell"}, AlwaysAsk: []string{"shell"}}, shell, Ask},
		{"always_ask does not rescue blocked", Policy{Level: LevelFull, AlwaysAsk: []string{"shell"}}, blocked, Refuse},
		{"always_ask does not rescue readonly refusal", Policy{Level: LevelReadOnly, AlwaysAsk: []string{"shell"}}, shell, Refuse},
		{"always_ask other tool", Policy{Level: LevelFull, AlwaysAsk: []string{"file_write"}}, shell, Run},
		{"unknown level fails closed", Policy{Level: "read_only"}, shell, Refuse},
		{"zero policy runs low", Policy{}, read, Run},
		{"empty blocked list blocks nothing", Policy{Level: LevelFull, BlockedCommands: []string{}}, blocked, Run},
		{"custom blocked list replaces defaults", Policy{Level: LevelFull, BlockedCommands: []string{"make*"}}, shell, Refuse},
		{"custom blocked list drops defaults", Policy{Level: LevelFull, BlockedCommands: []string{"make*"}}, blocked, Run},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.p.Decide(tc.c, s.ws)
			if d.Verdict != tc.want {
				t.Fatalf("Decide = %v (%s), want %v", d.Verdict, d.Reason, tc.want)
			}
		})
	}
}

func TestOfferedAndNotOfferedRefused(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	names := func(specs []Spec) []string {
		var out []string
		for _, sp := range specs {
			out = append(out, sp.Name)
		}
		return out
	}
	all := Specs()
	if got := names(all); !slices.Equal(got, []string{"shell", "file_read", "file_write", "file_list", "ask_user", "time", "memory_store", "memory_recall", "memory_forget", "memory_export", "memory_purge",
		"cron_add", "cron_list", "cron_remove", "cron_update", "cron_run", "cron_runs", "delegate", "sop_list", "sop_execute", "sop_advance", "sop_approve", "sop_status"}) {
		t.Fatalf("Specs = %v", got)
	}
	for _, sp := range all {
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(sp.Parameters, &schema); err != nil || schema.Type != "object" || schema.Properties == nil {
			t.Errorf("%s: parameters are not a JSON Schema object: %s (%v)", sp.Name, sp.Parameters, err)
		}
		if sp.Description == "" {
			t.Errorf("%s: no description", sp.Name)
		}
	}

	excl := Policy{Level: LevelFull, ExcludedTools: []string{"shell", "file_write"}}
	if got := names(excl.Offered(all)); !slices.Equal(got, []string{"file_read", "file_list", "ask_user", "time", "memory_store", "memory_recall", "memory_forget", "memory_export", "memory_purge",
		"cron_add", "cron_list", "cron_remove", "cron_update", "cron_run", "cron_runs", "delegate", "sop_list", "sop_execute", "sop_advance", "sop_approve", "sop_status"}) {
		t.Fatalf("excluded Offered = %v", got)
	}
	if d := excl.Decide(call("shell", map[string]any{"command": "ls"}), s.ws); d.Verdict != Refuse || !strings.Contains(d.Reason, "not offered") {
		t.Fatalf("excluded shell: %+v", d)
	}

	allow := Policy{Level: LevelFull, AllowedTools: []string{"time", "file_read"}}
	if got := names(allow.Offered(all)); !slices.Equal(got, []string{"file_read", "time"}) {
		t.Fatalf("allowed Offered = %v", got)
	}
	if d := allow.Decide(call("file_list", nil), s.ws); d.Verdict != Refuse {
		t.Fatalf("not-allowed file_list: %+v", d)
	}
	if d := allow.Decide(call("time", nil), s.ws); d.Verdict != Run {
		t.Fatalf("allowed time: %+v", d)
	}

	both := Policy{Level: LevelFull, AllowedTools: []string{"time", "shell"}, ExcludedTools: []string{"shell"}}
	if got := names(both.Offered(all)); !slices.Equal(got, []string{"time"}) {
		t.Fatalf("allowed+excluded Offered = %v", got)
	}
	if d := (Policy{Level: LevelFull}).Decide(Call{Name: "rm"}, s.ws); d.Verdict != Refuse {
		t.Fatalf("unknown tool: %+v", d)
	}
}

func TestDecideBadArgumentsRefused(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := Policy{Level: LevelFull}
	cases := []struct {
		c    Call
		want string
	}{
		{Call{Name: "shell", Arguments: json.RawMessage(`{}`)}, `"command"`},
		{Call{Name: "shell", Arguments: json.RawMessage(`{"command":"   "}`)}, "empty command"},
		{Call{Name: "shell", Arguments: json.RawMessage(`{"command":5}`)}, "invalid arguments"},
		{Call{Name: "file_read", Arguments: json.RawMessage(`["x"]`)}, "JSON object"},
		{Call{Name: "file_read", Arguments: json.RawMessage(`{"path":""}`)}, `"path"`},
		{Call{Name: "file_write", Arguments: json.RawMessage(`{"path":"a"}`)}, `"content"`},
		{Call{Name: "ask_user", Arguments: json.RawMessage(`{"question":""}`)}, "empty question"},
		{Call{Name: "file_read", Arguments: json.RawMessage(`{"path":"a\u0000b"}`)}, "NUL"},
	}
	for _, tc := range cases {
		d := p.Decide(tc.c, s.ws)
		if d.Verdict != Refuse || !strings.Contains(d.Reason, tc.want) {
			t.Errorf("%s %s: %+v, want refusal mentioning %s", tc.c.Name, tc.c.Arguments, d, tc.want)
		}
	}
	if d := p.Decide(call("file_read", map[string]any{"path": "x"}), ""); d.Verdict != Refuse || !strings.Contains(d.Reason, "no workspace") {
		t.Errorf("no workspace: %+v", d)
	}
}

func TestBlockedCommands(t *testing.T) {
	t.Parallel()
	blocked := []string{
		"rm -rf /", "rm -fr /", "rm -r -f /", "rm -Rf /", "  rm   -rf   / ", "rm -rf /*", "rm -rf ~", "rm -rf $HOME",
		"sudo rm -rf /", "/bin/rm -rf /", "sudo -u root rm -rf /", "env FOO=1 rm -rf /", "FOO=1 rm -rf /",
		"echo x; rm -rf /", "true && rm -rf ~", "false || reboot", "cat x | sh -c 'rm -rf /'", "bash -c \"rm -rf /\"",
		"$(reboot)", "`shutdown -h now`", "rm --no-preserve-root -rf /",
		"mkfs.ext4 /dev/sda1", "mkfs -t ext4 /dev/sdb", "dd if=/dev/zero of=/dev/sda bs=1M", "shred /dev/sda",
		":(){ :|:& };:", ": ( ) { : | : & } ; :", "shutdown -h now", "reboot", "halt", "poweroff", "init 0",
		"systemctl reboot", "nohup reboot &", "timeout 5 reboot", "chmod -R 777 /",
		// Other spellings of the same target or flags.
		"rm --recursive --force /", "sudo rm --force --recursive /", "rm -r --force //", "rm -rf /.",
		"rm -rf /tmp/..", "rm -rf ${HOME}", "rm -rf \"$HOME\"", "rm -rf ~/", "rm -rf $HOME/", "chmod --recursive 777 /",
	}
	for _, c := range blocked {
		if _, ok := blockedBy(DefaultBlockedCommands, c); !ok {
			t.Errorf("not blocked: %q", c)
		}
	}
	allowed := []string{
		"rm -rf /tmp/x", "rm -rf build", "rm -rf ./", "ls -la /", "echo hello", "grep reboot log.txt",
		"dd if=a of=b", "git commit -m 'fix the shutdown handler'", "cat init.py", "go test ./...", "make",
		"echo halting", "mkdir mkfs", "init", "ls; echo done",
		"rm --recursive --force build", "rm -rf /tmp/../tmp/x", "rm -rf ~/project/build", "rm -r --force ./out",
	}
	for _, c := range allowed {
		if p, ok := blockedBy(DefaultBlockedCommands, c); ok {
			t.Errorf("blocked %q by %q", c, p)
		}
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	var p Policy
	cases := []struct {
		c    Call
		want string
	}{
		{call("shell", map[string]any{"command": "ls -la"}), "shell: ls -la"},
		{call("file_write", map[string]any{"path": "a.txt", "content": "hello"}), "file_write: a.txt (5 bytes)"},
		{call("file_read", map[string]any{"path": "a.txt"}), "file_read: a.txt"},
		{call("file_list", nil), "file_list: ."},
		{call("ask_user", map[string]any{"question": "Proceed?"}), "ask_user: Proceed?"},
		{call("ask_user", map[string]any{"question": "Color?", "choices": []string{"red", "blue"}}), "ask_user: Color? [red | blue]"},
		{call("time", nil), "time"},
		{Call{Name: "shell", Arguments: json.RawMessage(`{"cmd":1}`)}, `shell {"cmd":1}`},
	}
	for _, tc := range cases {
		if got := p.Summary(tc.c); got != tc.want {
			t.Errorf("Summary(%s) = %q, want %q", tc.c.Arguments, got, tc.want)
		}
	}
	// A shell command is shown whole well past the limit of other summaries.
	long := "echo " + strings.Repeat("é", 1500) + "; rm -rf ~/important"
	if got := p.Summary(call("shell", map[string]any{"command": long})); got != "shell: "+long {
		t.Fatalf("a 3 KB command is not shown whole: %d bytes, tail %q", len(got), got[len(got)-30:])
	}
	// Other summaries are cut at summaryLimit on a rune boundary, and the cut is said.
	got := p.Summary(call("ask_user", map[string]any{"question": strings.Repeat("é", 1500) + " and the end"}))
	if len(got) > summaryLimit+40 || !strings.HasSuffix(got, "… (1022 more bytes not shown)") || !strings.HasPrefix(got, "ask_user: éé") {
		t.Fatalf("long summary not clipped with a marker: %d bytes, tail %q", len(got), got[len(got)-40:])
	}
}

// Everything shown for approval is escaped: the user reads what would run, control characters included.
func TestSummaryEscapes(t *testing.T) {
	t.Parallel()
	var p Policy
	cases := []struct {
		name string
		c    Call
		want string
	}{
		{"terminal spoof", call("shell", map[string]any{"command": "echo PWNED > marker #\r\x1b[6A\x1b[J[tool shell] {\"command\":\"ls -la\"}..."}),
			`shell: echo PWNED > marker #\r\x1b[6A\x1b[J[tool shell] {"command":"ls -la"}...`},
		{"literal backslash stays distinct", call("shell", map[string]any{"command": `printf 'a\x1b\n'`}), `shell: printf 'a\\x1b\\n'`},
		{"bidi override", call("shell", map[string]any{"command": "echo \u202eevil\u202c ok"}), `shell: echo \u202eevil\u202c ok`},
		{"zero width and no-break space", call("shell", map[string]any{"command": "r\u200bm\u00a0x"}), `shell: r\u200bm\u00a0x`},
		{"multi-line: every line shown", call("shell", map[string]any{"command": "echo one\nrm x\x1b[2K\n\necho \\\n"}),
			"shell: 5 lines\n  1| echo one\n  2| rm x\\x1b[2K\n  3| \n  4| echo \\\\\n  5| "},
		{"carriage return cannot hide a line", call("shell", map[string]any{"command": "rm -rf ~/x\r\necho hi"}),
			"shell: 2 lines\n  1| rm -rf ~/x\\r\n  2| echo hi"},
		{"file_write path", call("file_write", map[string]any{"path": "a\x1b[2K.txt", "content": "x"}), `file_write: a\x1b[2K.txt (1 bytes)`},
		{"file_read path", call("file_read", map[string]any{"path": "\u202etxt.sh"}), `file_read: \u202etxt.sh`},
		{"ask_user question and choices", call("ask_user", map[string]any{"question": "ok?\n\x1b[8m", "choices": []string{"y\r", "n"}}),
			`ask_user: ok?\n\x1b[8m [y\r | n]`},
		{"unparsed arguments", Call{Name: "shell", Arguments: json.RawMessage("{\"cmd\":\"\u202e\"}")}, `shell {"cmd":"\u202e"}`},
	}
	for _, tc := range cases {
		if got := p.Summary(tc.c); got != tc.want {
			t.Errorf("%s: Summary =\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

// A shell command longer than the shell summary limit is cut on a character boundary before escaping (never
// inside an escape), the cut is said with the number of bytes left out, and the line count covers the whole
// command.
func TestSummaryLongShellCommand(t *testing.T) {
	t.Parallel()
	var p Policy
	cmd := strings.Repeat("\x1b", shellSummaryLimit+100)
	got := p.Summary(call("shell", map[string]any{"command": cmd}))
	want := "shell: " + strings.Repeat(`\x1b`, shellSummaryLimit) + "… (100 more bytes not shown)"
	if got != want {
		t.Fatalf("Summary of %d escape characters: %d bytes, tail %q", len(cmd), len(got), got[len(got)-60:])
	}

	lines := strings.Repeat("echo ok\n", shellSummaryLimit/8) + "rm -rf ~/hidden-at-the-end"
	got = p.Summary(call("shell", map[string]any{"command": lines}))
	head, _, _ := strings.Cut(got, "\n")
	if head != fmt.Sprintf("shell: %d lines", shellSummaryLimit/8+1) || !strings.HasSuffix(got, "\n… (26 more bytes not shown)") {
		t.Fatalf("Summary of a long multi-line command: head %q, tail %q", head, got[len(got)-60:])
	}
	if strings.Contains(got, "hidden-at-the-end") {
		t.Fatal("the text past the limit is shown")
	}
}

// FuzzBlockedSuffix: whatever precedes it, a destructive command after ";" is still blocked, and the
// matcher never panics on arbitrary input.
func FuzzBlockedSuffix(f *testing.F) {
	for _, s := range []string{"", "echo hi", "sudo -u", "'unclosed", "a\\", "$(", "x=1", ":(){", "-rf", "sh -c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, prefix string) {
		_, _ = blockedBy(DefaultBlockedCommands, prefix)
		if _, ok := blockedBy(DefaultBlockedCommands, prefix+"; rm -rf /"); !ok {
			t.Fatalf("%q not blocked", prefix+"; rm -rf /")
		}
	})
}

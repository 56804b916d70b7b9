package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// check runs every invariant that needs the live daemon.
func (h *chaos) check() error {
	c, _, err := dialInit(h.in.sock)
	if err != nil {
		return err
	}
	defer c.Close()
	l := h.led
	l.mu.Lock()
	defer l.mu.Unlock()

	// Messages.
	sessions := map[string]string{}
	ackedTurns := 0
	for _, r := range l.turns {
		sessions[r.session] = r.mode
		if r.acked {
			ackedTurns++
		}
	}
	histories := map[string][]message{}
	unread := 0
	for sid := range sessions {
		if histories[sid], err = history(c, sid); err != nil {
			h.violate("the history of %s cannot be read after the chaos: %v", sid, err)
			unread++
		}
	}
	if bad := checkTurns(l.turns, histories); len(bad) > 0 || unread > 0 {
		for _, b := range bad {
			h.violate("%s", b)
		}
	} else {
		h.pass("every acknowledged message present exactly once (%d acknowledged turns of %d sent, %d sessions)", ackedTurns, len(l.turns), len(sessions))
	}

	// ACP sessions resume.
	resumed, acp := 0, 0
	for sid, mode := range sessions {
		if mode != "acp" {
			continue
		}
		acked := false
		for _, r := range l.turns {
			if r.session == sid && r.acked {
				acked = true
			}
		}
		if !acked {
			continue
		}
		acp++
		if _, err := c.newSession(map[string]any{"session_id": sid, "chat_mode": "acp", "agent_alias": "default"}); err != nil {
			h.violate("ACP session %s does not resume: %v", sid, err)
			continue
		}
		t, err := c.prompt(sid, "after the chaos "+sid)
		if err != nil || t.outcome != "completed" {
			h.violate("resumed ACP session %s does not take a turn: %v %q", sid, err, t.outcome)
			continue
		}
		resumed++
		_ = c.callInto("session/close", map[string]any{"session_id": sid}, nil)
	}
	if resumed == acp {
		h.pass("every ACP session with an acknowledged turn resumes and takes a new turn (%d)", acp)
	}

	// Config: the file and the live value.
	var got struct {
		Value string `json:"value"`
	}
	if err := c.callInto("config/get", map[string]any{"prop": promptProp}, &got); err != nil {
		return err
	}
	if msg := checkConfigValue(got.Value, l.configAcked, l.configInflight); msg != "" {
		h.violate("live config: %s", msg)
	} else if h.configBad == 0 {
		h.pass("config.toml parsed after every one of %d kills and always held an acknowledged version (%d sets acknowledged)", h.kills, l.configSets)
	}

	// Uploads: every acknowledged file complete at its content address; nothing partial at any indexed name.
	ws := filepath.Join(h.in.root, "agents", "default", "workspace")
	uploads := filepath.Join(ws, "uploads")
	before := len(h.violations)
	for name, sum := range l.uploadsAcked {
		b, err := os.ReadFile(name)
		if err != nil {
			h.violate("acknowledged upload %s: %v", name, err)
			continue
		}
		if s := sha256.Sum256(b); hex.EncodeToString(s[:]) != sum {
			h.violate("acknowledged upload %s holds other bytes (%d)", name, len(b))
		}
	}
	entries, _ := os.ReadDir(uploads)
	for _, e := range entries {
		if tempName.MatchString(e.Name()) {
			continue // counted by the temp-file check
		}
		b, err := os.ReadFile(filepath.Join(uploads, e.Name()))
		if err != nil {
			h.violate("upload %s: %v", e.Name(), err)
			continue
		}
		s := sha256.Sum256(b)
		sum := hex.EncodeToString(s[:])
		if !strings.HasPrefix(e.Name(), sum) || !l.uploadsSent[sum] {
			h.violate("partial or foreign file at an upload path: %s (%d bytes, sha256 %s)", e.Name(), len(b), sum)
		}
	}
	// A new upload after the chaos works (and lets the daemon sweep what a killed write left).
	if sid, err := c.newSession(map[string]any{"agent_alias": "default", "session_id": "chaos-after"}); err != nil {
		h.violate("no session after the chaos: %v", err)
	} else if _, _, err := upload(c, sid, "after.txt", []byte("after the chaos\n")); err != nil {
		h.violate("an upload after the chaos failed: %v", err)
	}
	if len(h.violations) == before {
		h.pass("every acknowledged upload complete at its path, no partial file at an upload path (%d acknowledged, %d files)", len(l.uploadsAcked), len(entries))
	}

	// Memories.
	before = len(h.violations)
	for key, content := range l.memories {
		var r struct {
			Entry struct {
				Content string `json:"content"`
			} `json:"entry"`
		}
		if err := c.callInto("memory/get", map[string]any{"key": key, "agent": "default"}, &r); err != nil {
			h.violate("acknowledged memory %s: %v", key, err)
		} else if r.Entry.Content != content {
			h.violate("acknowledged memory %s holds %q, want %q", key, r.Entry.Content, content)
		}
	}
	if len(h.violations) == before {
		h.pass("every acknowledged memory stored (%d)", len(l.memories))
	}

	// SOP runs: each acknowledged one ended exactly once, no step start without its outcome.
	h.checkSops(c, l.sopRuns)

	// Scheduled jobs: every acknowledged job kept; none ran twice (its runs and its log lines).
	before = len(h.violations)
	ran := 0
	statuses := map[string]int{}
	var outputs []string
	for n, job := range l.cronAcked {
		var runs struct {
			Runs []struct {
				StartedAt string  `json:"started_at"`
				Status    string  `json:"status"`
				Output    *string `json:"output"`
			} `json:"runs"`
		}
		if err := c.callInto("cron/runs", map[string]any{"id": job.id, "limit": 50}, &runs); err != nil {
			h.violate("acknowledged job chaos-%d (%s): %v", n, job.id, err)
			continue
		}
		if len(runs.Runs) > 1 {
			h.violate("job chaos-%d (%s, due %s) recorded %d runs for its one due time", n, job.id, job.due.Format(time.RFC3339Nano), len(runs.Runs))
		}
		ran += len(runs.Runs)
		for _, r := range runs.Runs {
			statuses[r.Status]++
			if r.Status != "ok" && r.Output != nil {
				outputs = append(outputs, fmt.Sprintf("chaos-%d %s: %.120q", n, r.Status, *r.Output))
			}
		}
	}
	logText, _ := os.ReadFile(filepath.Join(ws, cronLog))
	fmt.Fprintf(h.log, "chaos: job runs by status: %v\n", statuses)
	for _, o := range outputs {
		fmt.Fprintln(h.log, "chaos:   ", o)
	}
	for _, b := range checkCronLog(string(logText)) {
		h.violate("%s", b)
	}
	if len(h.violations) == before {
		h.pass("no scheduled job ran twice for one due time (%d acknowledged of %d sent, %d runs recorded, %d log lines)",
			len(l.cronAcked), l.cronSent, ran, strings.Count(string(logText), "\n"))
	}
	return nil
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// The dashboard's actions in a real Chromium against the real daemon (issue 27), one daemon and one browser
// for all of them: the Approvals page, its push stream open, is pushed a tool approval another client's turn waits on and allows it (the
// command runs in that turn), then edits the next one's arguments and runs the edit instead, as the chat's Edit and run does; the chat answers a turn's question; the cron page adds a job, runs it (the run
// in its history, its output on disk), pauses and resumes it; the doctor shows a finding with its fix; the
// agents page shows an identity file and saves an edit; the SOP page starts a run and approves its gate; the
// MCP page shows every configured server's state, one no agent is granted too (the ready one's pid is the daemon's child); the devices page makes a
// code, rotates and revokes a device. Every check is on the DOM and on the daemon's state.

const actionsConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[agents.ops]
model_provider = "echo.default"
risk_profile = "ops"
mcp_bundles = ["all"]

[risk_profiles.supervised]
level = "supervised"
workspace_only = true
approval_timeout_secs = 120

[risk_profiles.ops]
level = "supervised"
workspace_only = true
auto_approve = ["shell"]

[sop]
sops_dir = "shared/sops"

[[mcp.servers]]
name = "plain"
command = %q
start = "eager"

[[mcp.servers]]
name = "broken"
command = "/nonexistent/zeroclaw-mcp-server"
start = "eager"

[[mcp.servers]]
name = "orphan"
command = %q

[mcp_bundles.all]
servers = ["plain", "broken"]
`

func TestDashboardActionsInBrowser(t *testing.T) {
	t.Parallel()
	srvBin := filepath.Join(t.TempDir(), "mcptestserver")
	if out, err := exec.Command("go", "build", "-o", srvBin, "../mcp/mcptest/mcptestserver").CombinedOutput(); err != nil {
		t.Fatalf("building mcptestserver: %v\n%s", err, out)
	}
	h, root := homeWithConfig(t, fmt.Sprintf(actionsConfig, srvBin, srvBin))
	dropSOP(t, root)
	// Two agents are enabled: the SOP names the one its steps run as.
	manifest := filepath.Join(root, "shared", "sops", "deploy", "SOP.toml")
	mf, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(mf), "execution_mode", "agent = \"default\"\nexecution_mode", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	d := start(t, env(h), "daemon")
	sock := agentSock(h)
	waitSocket(t, d, sock)
	var m []string
	eventually(t, 10*time.Second, "the pairing banner", func() bool { m = dashBanner.FindStringSubmatch(d.stderr.String()); return m != nil })
	code, base := m[1], m[2]
	shots := screenshotDir(t)
	gw := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}

	b := startBrowser(t, "")
	b.viewport(1200, 900, false)
	b.open(base + "/ui/pair")
	b.waitJS("the pair form", "document.getElementById('pair-form')")
	b.setValue("pair-code", code)
	b.submit("pair-form")
	b.waitJS("paired", "document.getElementById('pair-device')")
	browserDevice := b.str("localStorage.getItem('zeroclaw.device')")

	t.Run("approvals", func(t *testing.T) {
		b.t = t
		// Another client (the socket, as this uid: the owner) runs a turn that waits on a shell approval.
		c := dialRPC(t, sock)
		c.Initialize()
		sid := c.Call("session/new", map[string]any{"agent_alias": "default"}, "new")["result"].(map[string]any)["session_id"].(string)
		// The page opens its push stream first; the approval asked after is pushed to it.
		b.open(base + "/ui/approvals")
		b.waitJS("the approvals stream is open", "document.documentElement.dataset.push === 'stream' && document.getElementById('approvals-count').textContent === '0'")
		c.Request("session/prompt", map[string]any{"session_id": sid, "prompt": `/tool shell {"command": "echo allowed-in-browser > approved.txt"}`}, "turn")
		b.waitJS("the socket's approval is listed", "document.querySelector('#approvals-list article[data-kind=tool] button[data-decision=allow_once]')")
		if got := b.str("document.querySelector('#approvals-list article[data-kind=tool] pre').textContent"); !strings.Contains(got, "allowed-in-browser") {
			t.Fatalf("the approval shows %q, not the command", got)
		}
		if !strings.Contains(b.str("document.querySelector('#approvals-list article[data-kind=tool]').textContent"), sid) {
			t.Fatal("the approval does not name its session")
		}
		if _, err := os.Stat(filepath.Join(agentWorkspace(h), "approved.txt")); !os.IsNotExist(err) {
			t.Fatalf("the command ran before it was allowed (%v)", err)
		}
		// The waiting turn shows under Running turns (refreshed live), linked to its chat.
		b.waitJS("the waiting turn is listed running", "document.querySelector('#approvals-running a[href*=\"session=' + "+jsString(sid)+" + '\"]')")
		b.screenshot(shots, "approvals")
		b.click("#approvals-list article[data-kind=tool] button[data-decision=allow_once]")
		waitTurn(t, c, "turn")
		if data, err := os.ReadFile(filepath.Join(agentWorkspace(h), "approved.txt")); err != nil || !strings.Contains(string(data), "allowed-in-browser") {
			t.Fatalf("the allowed command did not run: %q %v", data, err)
		}
		b.waitJS("the answered approval leaves the list", "!document.querySelector('#approvals-list article[data-kind=tool]') && document.getElementById('approvals-count').textContent === '0'")

		// Edit and run: the form starts from the call's arguments; a box that is not a JSON object is refused
		// beside it (nothing sent, still waiting); the edited call runs in the asking turn, the original never.
		c.Request("session/prompt", map[string]any{"session_id": sid, "prompt": `/tool shell {"command": "echo original > original.txt"}`}, "turn2")
		b.waitJS("the second approval is listed", "document.querySelector('#approvals-list article[data-kind=tool] button[data-decision=reject_with_edit]')")
		b.click("#approvals-list article[data-kind=tool] button[data-decision=reject_with_edit]")
		b.waitJS("the edit form opens", "!document.querySelector('#approvals-list article[data-kind=tool] form.edit').hidden")
		if got := b.str("JSON.parse(document.querySelector('#approvals-list form.edit textarea').value).command"); got != "echo original > original.txt" {
			t.Fatalf("the edit form starts from %q, not the call's command", got)
		}
		if lbl := b.str("document.querySelector('label[for=' + document.querySelector('#approvals-list form.edit textarea').id + ']').textContent"); lbl == "" {
			t.Fatal("the edit box has no label")
		}
		b.eval(`(() => { const t = document.querySelector('#approvals-list form.edit textarea'); t.value = '["not", "an object"]'; })()`, nil)
		b.eval("document.querySelector('#approvals-list form.edit').requestSubmit()", nil)
		b.waitJS("the refusal beside the box", "document.querySelector('#approvals-list form.edit textarea').getAttribute('aria-invalid') === 'true' && !document.querySelector('#approvals-list form.edit p.error').hidden")
		b.eval(`(() => { const t = document.querySelector('#approvals-list form.edit textarea'); t.value = JSON.stringify({command: "echo edited > edited.txt"}); })()`, nil)
		b.eval("document.querySelector('#approvals-list form.edit').requestSubmit()", nil)
		waitTurn(t, c, "turn2")
		if data, err := os.ReadFile(filepath.Join(agentWorkspace(h), "edited.txt")); err != nil || !strings.Contains(string(data), "edited") {
			t.Fatalf("the edited call did not run: %q %v", data, err)
		}
		if _, err := os.Stat(filepath.Join(agentWorkspace(h), "original.txt")); !os.IsNotExist(err) {
			t.Fatalf("the original call ran too (%v)", err)
		}
		b.waitJS("the edited approval leaves the list", "document.getElementById('approvals-count').textContent === '0'")
		if mode := b.str("document.documentElement.dataset.push"); mode != "stream" {
			t.Fatalf("the page fell back to polling (%q)", mode)
		}
	})

	t.Run("sessions running live", func(t *testing.T) {
		b.t = t
		// The Sessions page is open before the turn starts; the turn shows as running without a reload, and
		// goes back to idle when it ends.
		c := dialRPC(t, sock)
		c.Initialize()
		sid := c.Call("session/new", map[string]any{"agent_alias": "default"}, "new")["result"].(map[string]any)["session_id"].(string)
		b.open(base + "/ui/sessions")
		b.waitJS("the sessions page is loaded", "document.documentElement.dataset.loaded === 'sessions' && document.querySelector('tr[data-session=' + JSON.stringify("+jsString(sid)+") + ']')")
		if st := b.str("document.querySelector('tr[data-session=' + JSON.stringify(" + jsString(sid) + ") + ']').dataset.state"); st == "running" {
			t.Fatal("the session is running before its turn")
		}
		c.Request("session/prompt", map[string]any{"session_id": sid, "prompt": `/tool shell {"command": "echo live > live.txt"}`}, "live")
		b.waitJS("the running turn appears on the open page", "document.querySelector('tr[data-session=' + JSON.stringify("+jsString(sid)+") + '][data-state=running]')")
		c.Call("session/cancel", map[string]any{"session_id": sid}, "cancel")
		waitTurn(t, c, "live")
		b.waitJS("the ended turn leaves the running state", "!document.querySelector('tr[data-session=' + JSON.stringify("+jsString(sid)+") + '][data-state=running]')")
	})

	t.Run("chat edit", func(t *testing.T) {
		b.t = t
		// The chat's Edit and run: the box starts from the tool call's arguments; the edited call runs in the
		// turn, the original never.
		b.open(base + "/ui/chat?agent=default")
		b.waitJS("the chat connects", "!document.getElementById('chat-send').disabled")
		b.setValue("chat-input", `/tool shell {"command": "echo chat-original > chat-original.txt"}`)
		b.submit("chat-form")
		b.waitJS("the approval request", "document.querySelector('.approval button[data-decision=edit]')")
		b.click(".approval button[data-decision=edit]")
		b.waitJS("the edit box opens", "!document.querySelector('.approval form.edit').hidden && document.activeElement === document.querySelector('.approval form.edit textarea')")
		if got := b.str("JSON.parse(document.querySelector('.approval form.edit textarea').value).command"); got != "echo chat-original > chat-original.txt" {
			t.Fatalf("the edit box starts from %q", got)
		}
		b.eval(`document.querySelector('.approval form.edit textarea').value = JSON.stringify({command: "echo chat-edited > chat-edited.txt"})`, nil)
		b.eval("document.querySelector('.approval form.edit').requestSubmit()", nil)
		b.waitJS("the turn is done", "document.querySelector('article.msg.assistant[data-done=true]') && document.querySelector('.approval').dataset.answered === 'edit'")
		if data, err := os.ReadFile(filepath.Join(agentWorkspace(h), "chat-edited.txt")); err != nil || !strings.Contains(string(data), "chat-edited") {
			t.Fatalf("the edited call did not run: %q %v", data, err)
		}
		if _, err := os.Stat(filepath.Join(agentWorkspace(h), "chat-original.txt")); !os.IsNotExist(err) {
			t.Fatalf("the original call ran (%v)", err)
		}
		b.screenshot(shots, "chat-edit")
	})

	t.Run("question", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/chat?agent=default")
		b.waitJS("the chat connects", "!document.getElementById('chat-send').disabled")
		b.setValue("chat-input", `/tool ask_user {"question": "Which colour?", "choices": ["red", "blue <b>"]}`)
		b.submit("chat-form")
		b.waitJS("the question", "document.querySelector('form.question[data-kind=choice] input[value=\"choice-1\"]')")
		if got := b.str("document.querySelector('form.question .ask').textContent"); got != "Which colour?" {
			t.Fatalf("the question reads %q", got)
		}
		if n := b.str("String(document.querySelectorAll('#chat-log b').length)"); n != "0" {
			t.Fatal("a choice's markup became an element")
		}
		b.screenshot(shots, "chat-question")
		// Answer with nothing picked: the page asks for a pick and sends nothing.
		b.eval("document.querySelector('form.question').id = 'q-form'", nil)
		b.submit("q-form")
		b.waitJS("asked to pick", "!document.querySelector('form.question .error').hidden")
		b.click(`form.question input[value="choice-1"]`)
		b.submit("q-form")
		b.waitJS("the tool returns the choice", "[...document.querySelectorAll('details.tool pre.result')].some(e => e.textContent === 'blue <b>') && document.querySelector('article.msg.assistant[data-done=true]')")
	})

	t.Run("cron", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/cron")
		b.waitJS("the cron page", "document.documentElement.dataset.loaded === 'cron' && document.querySelector('#cron-agent option[value=ops]')")
		b.setValue("cron-name", "nightly-notes")
		b.eval("document.getElementById('cron-agent').value = 'ops'", nil)
		b.setValue("cron-schedule", "0 3 * * *")
		b.setValue("cron-what", "echo cron-ran-in-browser > cron.txt")
		b.submit("cron-add")
		b.waitJS("the job is listed", `document.querySelector('#cron-jobs article[data-name="nightly-notes"]')`)
		id := b.str(`document.querySelector('#cron-jobs article[data-name="nightly-notes"]').dataset.job`)
		if j := cronJob(t, sock, id); j["agent_alias"] != "ops" || j["expression"] != "0 3 * * *" || j["enabled"] != true {
			t.Fatalf("the daemon's job %v", j)
		}
		card := `#cron-jobs article[data-job="` + id + `"] `
		b.click(card + "button[data-action=run]")
		b.waitJS("the run in its history", `document.getElementById('cron-runs').dataset.job === `+jsString(id)+` && document.querySelector('#cron-runs li[data-status=ok]')`)
		if data, err := os.ReadFile(filepath.Join(root, "agents", "ops", "workspace", "cron.txt")); err != nil || !strings.Contains(string(data), "cron-ran-in-browser") {
			t.Fatalf("the job's command did not run: %q %v", data, err)
		}
		b.screenshot(shots, "cron")
		b.click(card + "button[data-action=pause]")
		b.waitJS("paused", `document.querySelector('`+card+`').dataset.enabled === 'false'`)
		if j := cronJob(t, sock, id); j["enabled"] != false {
			t.Fatalf("paused on the page, the daemon's job is %v", j["enabled"])
		}
		b.click(card + "button[data-action=resume]")
		b.waitJS("resumed", `document.querySelector('`+card+`').dataset.enabled === 'true'`)
		if j := cronJob(t, sock, id); j["enabled"] != true {
			t.Fatalf("resumed on the page, the daemon's job is %v", j["enabled"])
		}
		// Cron never waits on a person: an agent job whose turn asks for a shell call (default: supervised, no
		// auto-approve) has its call refused in the run, which ends at once; nothing is left on the Approvals list.
		b.setValue("cron-name", "asks-approval")
		b.eval("document.getElementById('cron-agent').value = 'default'; document.getElementById('cron-kind').value = 'agent'", nil)
		b.setValue("cron-schedule", "0 4 * * *")
		b.setValue("cron-what", `/tool shell {"command": "echo unattended > cron-asked.txt"}`)
		b.submit("cron-add")
		b.waitJS("the agent job is listed", `document.querySelector('#cron-jobs article[data-name="asks-approval"]')`)
		aid := b.str(`document.querySelector('#cron-jobs article[data-name="asks-approval"]').dataset.job`)
		b.click(`#cron-jobs article[data-job="` + aid + `"] button[data-action=run]`)
		b.waitJS("the agent job's run in its history", `document.getElementById('cron-runs').dataset.job === `+jsString(aid)+` && document.querySelector('#cron-runs li[data-status]')`)
		if _, err := os.Stat(filepath.Join(agentWorkspace(h), "cron-asked.txt")); !os.IsNotExist(err) {
			t.Fatalf("the unattended call ran (%v)", err)
		}
		rc := dialRPC(t, sock)
		rc.Initialize()
		if list := rc.Call("approvals/list", map[string]any{}, "al")["result"].(map[string]any)["approvals"].([]any); len(list) != 0 {
			t.Fatalf("a cron run left approvals waiting: %v", list)
		}

		// A schedule the daemon refuses is shown, and adds nothing.
		b.setValue("cron-schedule", "every blue moon")
		b.setValue("cron-what", "true")
		b.submit("cron-add")
		b.waitJS("the refusal", "!document.getElementById('cron-error').hidden")
		if n := b.str("String(document.querySelectorAll('#cron-jobs article').length)"); n != "2" {
			t.Fatalf("%s jobs after a refused add", n)
		}
	})

	t.Run("doctor", func(t *testing.T) {
		b.t = t
		cfg := filepath.Join(root, "config.toml")
		if err := os.Chmod(cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(cfg, 0o600)
		b.open(base + "/ui/doctor")
		b.waitJS("the doctor page", "document.querySelector('#doctor-findings li, #doctor-findings dl')")
		b.click("#doctor-run")
		b.waitJS("the mode finding with its fix", "[...document.querySelectorAll('#doctor-findings li')].some(li => li.textContent.includes('config.toml') && (li.querySelector('.fix') || {}).textContent.includes('chmod 600'))")
		c := dialRPC(t, sock)
		c.Initialize()
		res := c.Call("doctor/run", map[string]any{"offline": true}, "doc")
		if !strings.Contains(fmt.Sprint(res["result"]), "chmod 600 "+cfg) {
			t.Fatalf("the daemon's doctor/run lacks the finding the page shows: %v", res)
		}
		b.screenshot(shots, "doctor")
	})

	t.Run("agents", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/agents")
		b.waitJS("the identity files", "document.documentElement.dataset.loaded === 'agents' && document.querySelector('#agents-identity li[data-file] button')")
		b.eval("document.getElementById('agents-pick').value = 'default'; document.getElementById('agents-pick').dispatchEvent(new Event('change'))", nil)
		b.waitJS("the default agent's files", "document.querySelector('#agents-identity li[data-file=\"IDENTITY.md\"] button')")
		b.click(`#agents-identity li[data-file="IDENTITY.md"] button`)
		b.waitJS("the file is open", "!document.getElementById('agents-editor').hidden && document.getElementById('agents-editor').dataset.file === 'IDENTITY.md'")
		b.setValue("agents-content", "# Identity\n\nName: Browser-edited Claw\n")
		b.submit("agents-editor")
		b.waitJS("saved", "document.getElementById('agents-status').textContent.startsWith('Saved')")
		c := dialRPC(t, sock)
		c.Initialize()
		got := c.Call("personality/get", map[string]any{"agent": "default", "filename": "IDENTITY.md"}, "pg")
		if !strings.Contains(fmt.Sprint(got["result"]), "Browser-edited Claw") {
			t.Fatalf("the daemon's IDENTITY.md after the save: %v", got)
		}
		b.open(base + "/ui/agents")
		b.waitJS("the saved file is listed as written", `document.querySelector('#agents-identity li[data-file="IDENTITY.md"][data-exists=true]')`)
		b.screenshot(shots, "agents")
	})

	t.Run("sop", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/sops")
		b.waitJS("the SOP", `document.querySelector('#sops-list article[data-sop="deploy"] button[data-start]')`)
		b.click(`#sops-list article[data-sop="deploy"] button[data-start]`)
		b.waitJS("the run waits at its gate", "document.querySelector('#sops-runs article[data-status=waiting_approval] button[data-decision=approve]')")
		run := b.str("document.querySelector('#sops-runs article[data-status=waiting_approval]').dataset.run")
		b.screenshot(shots, "sops")
		b.click(`#sops-runs article[data-run="` + run + `"] button[data-decision=approve]`)
		b.waitJS("the run completes", `document.querySelector('#sops-runs article[data-run="`+run+`"][data-status=completed]')`)
		show, e, rc := run2(t, env(h), "sop", "show", run)
		if rc != 0 || !strings.Contains(show, "completed") || !strings.Contains(show, "by:       http:") {
			t.Fatalf("sop show %s: %d %q %q", run, rc, show, e)
		}
	})

	t.Run("sop gate on the approvals page", func(t *testing.T) {
		b.t = t
		// A run started from a terminal parks at its gate: the open Approvals page is pushed the gate (the
		// engine's run feed) and approves it there; the run completes.
		b.open(base + "/ui/approvals")
		b.waitJS("the approvals stream is open", "document.documentElement.dataset.push === 'stream'")
		out, e, rc := run2(t, env(h), "sop", "run", "deploy")
		if rc != 0 {
			t.Fatalf("sop run deploy: %d %q %q", rc, out, e)
		}
		b.waitJS("the gate is pushed", "document.querySelector('#approvals-list article[data-kind=sop] button[data-decision=approve]')")
		card := b.str("document.querySelector('#approvals-list article[data-kind=sop]').textContent")
		if !strings.Contains(card, "deploy") || !strings.Contains(card, "waits at step") {
			t.Fatalf("the gate's card reads %q", card)
		}
		if mode := b.str("document.documentElement.dataset.push"); mode != "stream" {
			t.Fatalf("the page polled (%q)", mode)
		}
		b.screenshot(shots, "approvals-sop")
		run := b.str("document.querySelector('#approvals-list article[data-kind=sop] code:last-of-type') && document.querySelector('#approvals-list article[data-kind=sop] p code').textContent")
		b.click("#approvals-list article[data-kind=sop] button[data-decision=approve]")
		b.waitJS("the answered gate leaves the list", "!document.querySelector('#approvals-list article[data-kind=sop]')")
		eventually(t, 30*time.Second, "the approved run completes", func() bool {
			show, _, rc := run2(t, env(h), "sop", "show", run)
			return rc == 0 && strings.Contains(show, "completed")
		})
	})

	t.Run("approvals fallback", func(t *testing.T) {
		b.t = t
		// Every event stream slot taken (32, shared with /api/events): the page's push stream is refused (503),
		// it polls instead, and a new approval still reaches it; the answer still runs the call.
		token := b.str("localStorage.getItem('zeroclaw.token')")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// A hog takes every free slot and each one that frees (a page left behind may hold one for a while),
		// until the subtest ends.
		full := make(chan struct{})
		go func() {
			cl := &http.Client{Transport: &http.Transport{Proxy: nil}}
			once := false
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				res, err := cl.Do(req)
				if err == nil && res.StatusCode == 200 {
					go func() { <-ctx.Done(); res.Body.Close() }()
					continue
				}
				if err == nil {
					res.Body.Close()
					if !once && res.StatusCode == 503 {
						once = true
						close(full)
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
		select {
		case <-full:
		case <-time.After(30 * time.Second):
			t.Fatal("the event stream slots never filled")
		}
		b.open(base + "/ui/approvals")
		b.waitJS("the page polls", "document.documentElement.dataset.push === 'poll' && document.documentElement.dataset.loaded === 'approvals'")
		c := dialRPC(t, sock)
		c.Initialize()
		sid := c.Call("session/new", map[string]any{"agent_alias": "default"}, "new")["result"].(map[string]any)["session_id"].(string)
		c.Request("session/prompt", map[string]any{"session_id": sid, "prompt": `/tool shell {"command": "echo polled > polled.txt"}`}, "turn")
		b.waitJS("the approval is polled in", "document.querySelector('#approvals-list article[data-kind=tool] button[data-decision=allow_once]')")
		if mode := b.str("document.documentElement.dataset.push"); mode != "poll" {
			t.Fatalf("the page is in mode %q with every stream slot taken", mode)
		}
		b.click("#approvals-list article[data-kind=tool] button[data-decision=allow_once]")
		waitTurn(t, c, "turn")
		if data, err := os.ReadFile(filepath.Join(agentWorkspace(h), "polled.txt")); err != nil || !strings.Contains(string(data), "polled") {
			t.Fatalf("the allowed command did not run: %q %v", data, err)
		}
		// The slots free: the page's next try opens its stream again.
		cancel()
		b.waitJS("the stream is back", "document.documentElement.dataset.push === 'stream'")
	})

	t.Run("mcp", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/mcp")
		b.waitJS("both servers' states", `document.querySelector('#mcp-servers tr[data-server="plain"][data-state="ready"]') && document.querySelector('#mcp-servers tr[data-server="broken"]')`)
		if st := b.str(`document.querySelector('#mcp-servers tr[data-server="broken"]').dataset.state`); st == "ready" {
			t.Fatal("a server whose command does not exist is shown ready")
		}
		b.waitJS("the broken server's error", `document.querySelector('#mcp-servers tr[data-server="broken"] td.error-text').textContent.length > 0`)
		// A configured server no agent is granted (lazy: nobody started it) is listed all the same.
		b.waitJS("the ungranted server", `document.querySelector('#mcp-servers tr[data-server="orphan"][data-agents="0"]')`)
		if st := b.str(`document.querySelector('#mcp-servers tr[data-server="orphan"]').dataset.state`); st != "idle" && st != "stopped" {
			t.Fatalf("the ungranted lazy server is shown %q, not idle", st)
		}
		if got := b.str(`document.querySelector('#mcp-servers tr[data-server="plain"]').children[1].textContent`); got != "ops" {
			t.Fatalf("the granted server's agents read %q, not ops", got)
		}
		pid, err := strconv.Atoi(b.str(`document.querySelector('#mcp-servers tr[data-server="plain"]').dataset.pid`))
		if err != nil || !slices.Contains(childrenOf(d.cmd.Process.Pid), pid) {
			t.Fatalf("the ready server's pid %d (%v) is not a child of the daemon %v", pid, err, childrenOf(d.cmd.Process.Pid))
		}
		b.screenshot(shots, "mcp")
	})

	t.Run("devices", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/devices")
		b.waitJS("the devices page", "document.documentElement.dataset.loaded === 'devices'")
		before := socketDevices(t, sock)
		b.click("#devices-code")
		b.waitJS("a pairing code", "/\\d{6}/.test(document.getElementById('devices-newcode').textContent)")
		pc := regexpDigits(b.str("document.getElementById('devices-newcode').textContent"))
		tok := pairHTTP(t, gw, base, pc)
		var phone string
		for _, id := range socketDevices(t, sock) {
			if !slices.Contains(before, id) {
				phone = id
			}
		}
		if phone == "" || statusWith(t, gw, base, tok) != 200 {
			t.Fatalf("the code from the page paired no device (%q)", phone)
		}
		b.open(base + "/ui/devices")
		b.waitJS("the new device is listed", `document.querySelector('#devices-table tr[data-device="`+phone+`"] button[data-rotate]')`)
		b.click(`#devices-table tr[data-device="` + phone + `"] button[data-rotate]`)
		b.waitJS("the rotation's code", "/\\d{6}/.test(document.getElementById('devices-result').textContent)")
		if statusWith(t, gw, base, tok) != 401 || slices.Contains(socketDevices(t, sock), phone) {
			t.Fatal("the rotated device's old token still works")
		}
		tok2 := pairHTTP(t, gw, base, regexpDigits(b.str("document.getElementById('devices-result').textContent")))
		var again string
		for _, id := range socketDevices(t, sock) {
			if !slices.Contains(before, id) {
				again = id
			}
		}
		b.open(base + "/ui/devices")
		b.waitJS("the re-paired device", `document.querySelector('#devices-table tr[data-device="`+again+`"] button[data-revoke]')`)
		b.screenshot(shots, "devices-actions")
		b.eval("window.confirm = () => true", nil)
		b.click(`#devices-table tr[data-device="` + again + `"] button[data-revoke]`)
		b.waitJS("the revoked device leaves the list", `!document.querySelector('#devices-table tr[data-device="`+again+`"]')`)
		if statusWith(t, gw, base, tok2) != 401 || slices.Contains(socketDevices(t, sock), again) {
			t.Fatal("the revoked device still has access")
		}
		if !slices.Contains(socketDevices(t, sock), browserDevice) {
			t.Fatal("the browser's own device went with the others")
		}
	})
}

// waitTurn reads c until the response with id (the turn's end), failing on an error response.
func waitTurn(t *testing.T, c *ndjson.Client, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		f := c.Next()
		if fmt.Sprint(f["id"]) == id {
			if f["error"] != nil {
				t.Fatalf("the turn failed: %v", f)
			}
			return
		}
	}
	t.Fatal("the turn did not end")
}

// cronJob is the daemon's job id over its socket.
func cronJob(t *testing.T, sock, id string) map[string]any {
	t.Helper()
	c := dialRPC(t, sock)
	c.Initialize()
	res, ok := c.Call("cron/get", map[string]any{"id": id}, "get")["result"].(map[string]any)
	if !ok {
		t.Fatalf("cron/get %s failed", id)
	}
	return res
}

func regexpDigits(s string) string {
	for i := 0; i+6 <= len(s); i++ {
		if _, err := strconv.Atoi(s[i : i+6]); err == nil && !strings.ContainsAny(s[i:i+6], "+- ") {
			return s[i : i+6]
		}
	}
	return ""
}

// pairHTTP trades a pairing code for a token over the gateway.
func pairHTTP(t *testing.T, gw *http.Client, base, code string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/pair", nil)
	req.Header.Set("X-Pairing-Code", code)
	res, err := gw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 200 || body.Token == "" {
		t.Fatalf("POST /pair with %q: %d %v", code, res.StatusCode, err)
	}
	return body.Token
}

// statusWith is GET /api/status's code for token.
func statusWith(t *testing.T, gw *http.Client, base, token string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/status", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := gw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

package rpctest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// twoAgents is the default config plus an agent "bot" on the same provider and profile.
var twoAgents = baseConfig + "\n[agents.bot]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n"

// wantErr fails unless werr is the error code and its message contains every part.
func wantErr(t *testing.T, what string, werr *wireError, code int, parts ...string) {
	t.Helper()
	if werr == nil || werr.Code != code {
		t.Fatalf("%s: got %v, want error %d", what, werr, code)
	}
	for _, p := range parts {
		if !strings.Contains(werr.Message, p) {
			t.Fatalf("%s: message %q does not name %q", what, werr.Message, p)
		}
	}
}

func TestAgentsListAndStatus(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(twoAgents+"\n[agents.off]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\nenabled = false\n"))
	c := dialRC(t, d, "")
	c.newSession(api.SessionNewParams{AgentAlias: "bot", SessionID: "s1"})
	c.newSession(api.SessionNewParams{AgentAlias: "bot", SessionID: "s2"})
	c.mustCall(api.MethodSessionClose, api.SessionIDParams{SessionID: "s2"}, nil)

	var list api.AgentsListResult
	c.mustCall(api.MethodAgentsList, map[string]any{}, &list)
	want := []api.AgentEntry{{Alias: "bot", Enabled: true}, {Alias: "default", Enabled: true}, {Alias: "off"}}
	if !slices.EqualFunc(list.Agents, want, func(a, b api.AgentEntry) bool {
		return a.Alias == b.Alias && a.Enabled == b.Enabled && a.Channels != nil && len(a.Channels) == 0
	}) {
		t.Fatalf("agents/list %+v", list.Agents)
	}
	var st api.AgentsStatusResult
	c.mustCall(api.MethodAgentsStatus, map[string]any{}, &st)
	got := map[string][2]int{}
	for _, a := range st.Agents {
		got[a.Alias] = [2]int{a.LiveSessions, a.PersistedSessions}
	}
	if got["bot"] != [2]int{1, 2} || got["default"] != [2]int{0, 0} || len(got) != 3 {
		t.Fatalf("agents/status %v, want bot 1 live 2 stored", got)
	}
}

func TestConfigMapKeysOverSocket(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	var keys api.ConfigMapKeysResult
	c.mustCall(api.MethodConfigMapKeys, api.ConfigMapKeysParams{Path: "agents"}, &keys)
	if !slices.Equal(keys.Keys, []string{"default"}) {
		t.Fatalf("map-keys %+v", keys)
	}
	var created api.ConfigMapKeyCreateResult
	c.mustCall(api.MethodConfigMapKeyCreate, api.ConfigMapKeyParams{Path: "providers.models.openai", Key: "work"}, &created)
	if !created.Created || created.Path != "providers.models.openai" || created.Key != "work" {
		t.Fatalf("create %+v", created)
	}
	c.mustCall(api.MethodConfigMapKeyCreate, api.ConfigMapKeyParams{Path: "providers.models.openai", Key: "work"}, &created)
	if created.Created {
		t.Fatal("second create reported created")
	}
	var got api.ConfigGetResult
	c.mustCall(api.MethodConfigGet, api.ConfigGetParams{Prop: "providers.models.openai.work.model"}, &got)
	if got.Value != "gpt-4.1" {
		t.Fatalf("seeded model %v", got.Value)
	}
	var deleted api.ConfigMapKeyDeleteResult
	c.mustCall(api.MethodConfigMapKeyDelete, api.ConfigMapKeyParams{Path: "providers.models.openai", Key: "work"}, &deleted)
	if !deleted.Deleted {
		t.Fatalf("delete %+v", deleted)
	}
	if text, _ := os.ReadFile(filepath.Join(d.ConfigDir, "config.toml")); strings.Contains(string(text), "openai.work") {
		t.Fatalf("entry still in the file:\n%s", text)
	}

	_, werr := c.call(api.MethodConfigMapKeyCreate, map[string]any{"path": "agents"})
	wantErr(t, "create without key", werr, api.CodeInvalidParams, "needs key")
	_, werr = c.call(api.MethodConfigMapKeyCreate, map[string]any{"path": "agents", "key": 7})
	wantErr(t, "numeric key", werr, api.CodeInvalidParams, "key must be a string")
	_, werr = c.call(api.MethodConfigMapKeyCreate, api.ConfigMapKeyParams{Path: "agents", Key: "Bad-Name"})
	wantErr(t, "bad alias", werr, api.CodeInvalidParams, "Bad-Name", "lowercase")
	_, werr = c.call(api.MethodConfigMapKeys, api.ConfigMapKeysParams{Path: "gateway"})
	wantErr(t, "not a map", werr, api.CodeInvalidParams, "no map-keyed section at `gateway`")
	_, werr = c.call(api.MethodConfigMapKeyDelete, api.ConfigMapKeyParams{Path: "risk_profiles", Key: "supervised"})
	wantErr(t, "delete a referenced profile", werr, api.CodeInvalidParams, "agents.default.risk_profile")
	_, werr = c.call(api.MethodConfigMapKeyRename, api.ConfigMapKeyRenameParams{Path: "agents", From: "default"})
	wantErr(t, "rename without to", werr, api.CodeInvalidParams, "needs to")
}

// Renaming an agent is refused while it has a live session; once the session is closed the rename goes
// through and takes the stored sessions and the workspace directory with it.
func TestRenameAgentMovesSessions(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(twoAgents))
	c := dialRC(t, d, "")
	sess := c.newSession(api.SessionNewParams{AgentAlias: "bot", SessionID: "s1"})
	if tr := c.prompt("s1", "hello", hooks{}); tr.err != nil {
		t.Fatalf("prompt: %v", tr.err)
	}
	rename := api.ConfigMapKeyRenameParams{Path: "agents", From: "bot", To: "robot"}
	cfgPath := filepath.Join(d.ConfigDir, "config.toml")
	before, _ := os.ReadFile(cfgPath)
	_, werr := c.call(api.MethodConfigMapKeyRename, rename)
	wantErr(t, "rename with a live session", werr, api.CodeInvalidParams, "1 live session")
	if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
		t.Fatalf("refused rename changed config.toml:\n%s", after)
	}

	c.mustCall(api.MethodSessionClose, api.SessionIDParams{SessionID: "s1"}, nil)
	var res api.ConfigMapKeyRenameResult
	c.mustCall(api.MethodConfigMapKeyRename, rename, &res)
	if !res.Renamed || len(res.Warnings) != 0 {
		t.Fatalf("rename %+v", res)
	}
	var list api.SessionListResult
	c.mustCall(api.MethodSessionList, api.SessionListParams{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].AgentAlias != "robot" {
		t.Fatalf("session/list after rename %+v", list.Sessions)
	}
	newWS := strings.Replace(sess.WorkspaceDir, filepath.Join("agents", "bot"), filepath.Join("agents", "robot"), 1)
	if st, err := os.Stat(newWS); err != nil || !st.IsDir() {
		t.Fatalf("workspace not moved to %s: %v", newWS, err)
	}
	if _, err := os.Stat(sess.WorkspaceDir); !os.IsNotExist(err) {
		t.Fatalf("old workspace still there: %v", err)
	}
	// The session comes back under its new agent, with its history.
	back := c.newSession(api.SessionNewParams{SessionID: "s1"})
	if back.AgentAlias != "robot" || back.MessageCount != 2 || back.WorkspaceDir != newWS {
		t.Fatalf("revived %+v", back)
	}
	var st api.AgentsStatusResult
	c.mustCall(api.MethodAgentsStatus, map[string]any{}, &st)
	for _, a := range st.Agents {
		if a.Alias == "bot" {
			t.Fatalf("old alias still listed: %+v", st.Agents)
		}
		if a.Alias == "robot" && (a.LiveSessions != 1 || a.PersistedSessions != 1) {
			t.Fatalf("robot %+v", a)
		}
	}
}

// Each new method needs its grant; map-key edits are checked path by path, including the references a rename
// rewrites.
func TestNewMethodsGrants(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("sessions:create", "config:update:risk_profiles.**", "config:update:agents.*.system_prompt"))
	c := dialRC(t, d, "")
	for _, m := range []struct {
		method, grant string
		params        any
	}{
		// (nil params are sent as {})
		{api.MethodAgentsList, "config:read", nil},
		{api.MethodAgentsStatus, "config:read", nil},
		{api.MethodConfigValidate, "config:read", nil},
		{api.MethodConfigMapKeys, "config:read", api.ConfigMapKeysParams{Path: "agents"}},
		{api.MethodConfigTemplates, "config:read", nil},
		{api.MethodConfigSections, "config:read", nil},
		{api.MethodConfigStatus, "config:read", nil},
		{api.MethodConfigCatalog, "config:read", nil},
		{api.MethodConfigCatalogModels, "config:read", api.CatalogModelsParams{ModelProvider: "echo"}},
		{api.MethodConfigResolveAliasSource, "config:read", api.ConfigResolveAliasSourceParams{Source: "agents"}},
		{api.MethodSessionConfigure, "sessions:execute", map[string]any{"session_id": "x"}},
		{api.MethodSessionGitBranch, "sessions:read", api.SessionIDParams{SessionID: "x"}},
		{api.MethodFsListDir, "files:read", api.FsListDirParams{}},
	} {
		if m.params == nil {
			m.params = map[string]any{}
		}
		_, werr := c.call(m.method, m.params)
		wantErr(t, m.method, werr, api.CodeForbidden, m.grant)
	}
	// Scoped config:update: agents.* is not covered, risk_profiles.** is, but a rename of a profile also
	// rewrites agents.default.risk_profile, which is not.
	_, werr := c.call(api.MethodConfigMapKeyCreate, api.ConfigMapKeyParams{Path: "agents", Key: "x"})
	wantErr(t, "create agent", werr, api.CodeForbidden, "agents.x")
	var created api.ConfigMapKeyCreateResult
	c.mustCall(api.MethodConfigMapKeyCreate, api.ConfigMapKeyParams{Path: "risk_profiles", Key: "careful"}, &created)
	if !created.Created {
		t.Fatal("allowed create not done")
	}
	_, werr = c.call(api.MethodConfigMapKeyRename, api.ConfigMapKeyRenameParams{Path: "risk_profiles", From: "supervised", To: "strict"})
	wantErr(t, "rename with a forbidden reference", werr, api.CodeForbidden, "agents.default.risk_profile")
	var renamed api.ConfigMapKeyRenameResult
	c.mustCall(api.MethodConfigMapKeyRename, api.ConfigMapKeyRenameParams{Path: "risk_profiles", From: "careful", To: "strict"}, &renamed)
	if !renamed.Renamed {
		t.Fatal("allowed rename not done")
	}
}

func TestConfigValidateReadsTheFile(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	var res api.ConfigValidateResult
	c.mustCall(api.MethodConfigValidate, map[string]any{}, &res)
	if !res.Valid || res.Error != "" {
		t.Fatalf("validate %+v", res)
	}
	cfgPath := filepath.Join(d.ConfigDir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(baseConfig+"\n[gateway]\nport = 99999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.mustCall(api.MethodConfigValidate, map[string]any{}, &res)
	if res.Valid || !strings.Contains(res.Error, "gateway.port") {
		t.Fatalf("validate of a bad file %+v", res)
	}
	var got api.ConfigGetResult
	c.mustCall(api.MethodConfigGet, api.ConfigGetParams{Prop: "gateway.port"}, &got)
	if got.Value != float64(42617) {
		t.Fatalf("live config changed: %v", got.Value)
	}
}

// fs/list_dir lists the caller's session workspace and nothing outside it.
func TestFsListDirConfined(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	ws := c.newSession(api.SessionNewParams{SessionID: "s1"}).WorkspaceDir
	clearIdentityFiles(t, ws) // session/new seeded them; this test lists a workspace of its own making
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "secret.txt"), "s")
	mustWrite(t, filepath.Join(ws, "b.txt"), "hello")
	mustWrite(t, filepath.Join(ws, ".hidden"), "h")
	mustWrite(t, filepath.Join(ws, "Sub", "inner.txt"), "i")
	for link, target := range map[string]string{"out": outside, "in": "Sub", "secret": filepath.Join(outside, "secret.txt")} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	list := func(p api.FsListDirParams) (api.FsListDirResult, *wireError) {
		t.Helper()
		var r api.FsListDirResult
		raw, werr := c.call(api.MethodFsListDir, p)
		if werr == nil {
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
		}
		return r, werr
	}
	names := func(r api.FsListDirResult) []string {
		var out []string
		for _, e := range r.Entries {
			out = append(out, e.Name)
		}
		return out
	}
	r, werr := list(api.FsListDirParams{SessionID: "s1"})
	if werr != nil || r.Cwd != ws || !slices.Equal(names(r), []string{"Sub", "b.txt", "in", "out", "secret"}) {
		t.Fatalf("root listing %v %v %v", r.Cwd, names(r), werr)
	}
	if e := r.Entries[1]; e.FullPath != filepath.Join(ws, "b.txt") || e.Size != 5 || e.IsDir || e.Mtime == nil {
		t.Fatalf("b.txt entry %+v", e)
	}
	if e := r.Entries[0]; !e.IsDir {
		t.Fatalf("Sub entry %+v", e)
	}
	if r, _ := list(api.FsListDirParams{SessionID: "s1", ShowHidden: true}); !slices.Contains(names(r), ".hidden") || !r.Entries[1].IsHidden {
		t.Fatalf("show_hidden %v", names(r))
	}
	for _, p := range []string{"Sub", filepath.Join(ws, "Sub"), "in", "./Sub/"} {
		if r, werr := list(api.FsListDirParams{SessionID: "s1", Path: p}); werr != nil || !slices.Equal(names(r), []string{"inner.txt"}) {
			t.Fatalf("list %q: %v %v", p, names(r), werr)
		}
	}
	for _, c := range []struct {
		path string
		code int
	}{
		{"..", api.CodeFsInvalidPath}, {"Sub/../..", api.CodeFsInvalidPath}, {"../" + filepath.Base(ws), api.CodeFsInvalidPath},
		{outside, api.CodeFsPermissionDenied}, {"/", api.CodeFsPermissionDenied},
		{"out", api.CodeFsPermissionDenied}, {"secret", api.CodeFsPermissionDenied},
		{"b.txt", api.CodeFsNotFound}, {"nope", api.CodeFsNotFound}, {"b.txt/x", api.CodeFsNotFound},
	} {
		_, werr := list(api.FsListDirParams{SessionID: "s1", Path: c.path})
		wantErr(t, "list "+c.path, werr, c.code)
	}
	_, werr = list(api.FsListDirParams{SessionID: "nope"})
	wantErr(t, "unknown session", werr, api.CodeSessionNotFound)
	// An admin without a session lists the default agent's workspace.
	if r, werr := list(api.FsListDirParams{}); werr != nil || r.Cwd != ws {
		t.Fatalf("default workspace %v %v", r.Cwd, werr)
	}
}

// A non-admin lists only through a session of its own.
func TestFsListDirNonAdminNeedsOwnSession(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("sessions:create", "files:read"))
	c := dialRC(t, d, "")
	_, werr := c.call(api.MethodFsListDir, api.FsListDirParams{})
	wantErr(t, "no session", werr, api.CodeInvalidParams, "session_id is required")
	c.newSession(api.SessionNewParams{SessionID: "mine"})
	c.mustCall(api.MethodFsListDir, api.FsListDirParams{SessionID: "mine"}, nil)
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestGitBranch(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	ws := c.newSession(api.SessionNewParams{SessionID: "s1"}).WorkspaceDir
	branch := func() (res api.SessionGitBranchResult) { // a fresh result each time: absent fields stay empty
		t.Helper()
		c.mustCall(api.MethodSessionGitBranch, api.SessionIDParams{SessionID: "s1"}, &res)
		return res
	}
	res := branch()
	if res.SessionID != "s1" || res.Branch != "" || res.Hash != "" {
		t.Fatalf("outside a repository %+v", res)
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", ws, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "feature/x")
	res = branch()
	if res.Branch != "feature/x" || res.Hash != "" {
		t.Fatalf("unborn branch %+v", res)
	}
	mustWrite(t, filepath.Join(ws, "f"), "x")
	git("add", "f")
	git("commit", "-q", "-m", "one")
	want := git("rev-parse", "--short=7", "HEAD")
	res = branch()
	if res.Branch != "feature/x" || res.Hash != want {
		t.Fatalf("after a commit %+v, want hash %s", res, want)
	}
	git("pack-refs", "--all")
	res = branch()
	if res.Hash != want {
		t.Fatalf("packed refs %+v, want hash %s", res, want)
	}
	git("checkout", "-q", "--detach")
	res = branch()
	if res.Branch != "" || res.Hash != want {
		t.Fatalf("detached %+v", res)
	}
	_, werr := c.call(api.MethodSessionGitBranch, api.SessionIDParams{SessionID: "nope"})
	wantErr(t, "unknown session", werr, api.CodeSessionNotFound)
	_, werr = c.call(api.MethodSessionGitBranch, map[string]any{})
	wantErr(t, "no session_id", werr, api.CodeInvalidParams, "session_id")
}

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

const (
	secretKeyProp = "providers.models.openai.default.api_key"
	secretValue   = "sk-e2e-very-secret-4242"
)

// configInstall is a fresh install's paths: the environment, config.toml and the socket.
type configInstall struct {
	env  []string
	root string
	cfg  string
	sock string
}

func newConfigInstall(t *testing.T) configInstall {
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	return configInstall{env: env(h), root: root, cfg: filepath.Join(root, "config.toml"), sock: filepath.Join(root, "data", "daemon.sock")}
}

// zc runs `zeroclaw args...` and fails the test unless it exits 0; it returns stdout.
func (in configInstall) zc(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, in.env, "", args...)
	if code != 0 {
		t.Fatalf("zeroclaw %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func (in configInstall) read(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(in.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkCLIEdits runs the same CLI scenario with or without a daemon: set/get/list/delete keep a comment, and a
// secret is enc2: on disk and masked everywhere it is shown.
func checkCLIEdits(t *testing.T, in configInstall) {
	t.Helper()
	raw := in.read(t)
	if err := os.WriteFile(in.cfg, append([]byte("# kept by hand\n"), raw...), 0o600); err != nil {
		t.Fatal(err)
	}
	if in.zc(t, "config", "set", "agents.default.system_prompt", "answer in French") != "set agents.default.system_prompt\n" {
		t.Error("set printed something unexpected")
	}
	if got := in.zc(t, "config", "get", "agents.default.system_prompt"); got != "answer in French\n" {
		t.Errorf("get = %q", got)
	}
	in.zc(t, "config", "set", "risk_profiles.supervised.approval_timeout_secs", "300")
	if got := in.zc(t, "config", "get", "risk_profiles.supervised.approval_timeout_secs"); got != "300\n" {
		t.Errorf("get number = %q", got)
	}
	in.zc(t, "config", "set", "providers.models.openai.default.model", "gpt-4.1")
	in.zc(t, "config", "set", secretKeyProp, secretValue)

	file := string(in.read(t))
	for _, want := range []string{"# kept by hand\n", `system_prompt = "answer in French"`, "approval_timeout_secs = 300",
		`model = "gpt-4.1"`, `api_key = "enc2:`} {
		if !strings.Contains(file, want) {
			t.Errorf("config.toml lacks %q:\n%s", want, file)
		}
	}
	if strings.Contains(file, secretValue) {
		t.Fatalf("the secret is in plain text on disk:\n%s", file)
	}
	if _, _, err := config.Load(in.cfg, nil); err != nil {
		t.Fatalf("config.toml no longer loads: %v", err)
	}

	if got := in.zc(t, "config", "get", secretKeyProp); got != "***MASKED***\n" {
		t.Errorf("get secret = %q", got)
	}
	list := in.zc(t, "config", "list", "providers")
	if !strings.Contains(list, secretKeyProp+` = "***MASKED***"`) || strings.Contains(list, secretValue) {
		t.Errorf("list providers:\n%s", list)
	}
	if !strings.Contains(list, `providers.models.openai.default.model = "gpt-4.1"`) {
		t.Errorf("list lacks the model:\n%s", list)
	}
	whole := in.zc(t, "config", "get")
	if strings.Contains(whole, secretValue) || !strings.Contains(whole, `"***MASKED***"`) {
		t.Errorf("whole config leaks or lacks the mask:\n%s", whole)
	}

	if in.zc(t, "config", "delete", "agents.default.system_prompt") != "deleted agents.default.system_prompt\n" {
		t.Error("delete printed something unexpected")
	}
	file = string(in.read(t))
	if strings.Contains(file, "system_prompt") || !strings.HasPrefix(file, "# kept by hand\n") {
		t.Errorf("after delete:\n%s", file)
	}

	_, errOut, code := run(t, in.env, "", "config", "get", "agents.default.no_such_key")
	if code != 1 || !strings.Contains(errOut, "unknown property") || !strings.Contains(errOut, "Try: zeroclaw config list") {
		t.Errorf("unknown prop: exit %d, stderr %q", code, errOut)
	}
}

func TestConfigCLIWithoutDaemon(t *testing.T) {
	t.Parallel()
	in := newConfigInstall(t)
	// No daemon has ever run: the CLI writes the default config itself, under the install lock.
	if got := in.zc(t, "config", "path"); got != in.cfg+"\n" {
		t.Fatalf("path = %q, want %s", got, in.cfg)
	}
	in.zc(t, "config", "get", "agents.default.model_provider")
	checkCLIEdits(t, in)

	_, errOut, code := run(t, in.env, "", "config", "reload")
	if code != 1 || !strings.Contains(errOut, "Try: zeroclaw daemon") {
		t.Errorf("reload without daemon: exit %d, stderr %q", code, errOut)
	}
	// The edits are what a daemon then starts with.
	d := start(t, in.env, "daemon")
	waitSocket(t, d, in.sock)
	c := dialRPC(t, in.sock)
	c.Initialize()
	if v := configGetValue(t, c, "risk_profiles.supervised.approval_timeout_secs"); v != float64(300) {
		t.Errorf("daemon sees approval_timeout_secs = %v", v)
	}
}

func TestConfigCLIWithDaemon(t *testing.T) {
	t.Parallel()
	in := newConfigInstall(t)
	d := start(t, in.env, "daemon")
	waitSocket(t, d, in.sock)
	// The daemon holds the install lock, so any success below went through RPC: the local path is refused.
	checkCLIEdits(t, in)

	c := dialRPC(t, in.sock)
	c.Initialize()
	if v := configGetValue(t, c, "risk_profiles.supervised.approval_timeout_secs"); v != float64(300) {
		t.Errorf("daemon's config/get approval_timeout_secs = %v", v)
	}
	if v := configGetValue(t, c, secretKeyProp); v != "***MASKED***" {
		t.Errorf("daemon's config/get api_key = %v", v)
	}
	if v := configGetValue(t, c, "agents.default.system_prompt"); v != "" {
		t.Errorf("deleted system_prompt reads %v over RPC", v)
	}

	// A hand edit is picked up by `config reload`.
	file := bytes.Replace(in.read(t), []byte("approval_timeout_secs = 300"), []byte("approval_timeout_secs = 301"), 1)
	if err := os.WriteFile(in.cfg, file, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := in.zc(t, "config", "reload"); !strings.HasPrefix(out, "reloaded (generation ") {
		t.Errorf("reload printed %q", out)
	}
	if v := configGetValue(t, c, "risk_profiles.supervised.approval_timeout_secs"); v != float64(301) {
		t.Errorf("after reload approval_timeout_secs = %v", v)
	}
}

func configGetValue(t *testing.T, c *ndjson.Client, prop string) any {
	t.Helper()
	r := c.Call("config/get", map[string]any{"prop": prop}, 90)
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("config/get %s: %v", prop, r)
	}
	return res["value"]
}

// The seed's example: an operator profile, then one atomic set-many creating a user.
func TestConfigSeedExampleCLI(t *testing.T) {
	t.Parallel()
	in := newConfigInstall(t)
	d := start(t, in.env, "daemon")
	waitSocket(t, d, in.sock)
	in.zc(t, "config", "set", "permission_profiles.operator.grants", `["config:read","sessions:create"]`)
	out := in.zc(t, "config", "set-many", "users.example.uid=1001", `users.example.permission_profiles=["operator"]`)
	if out != "set users.example.uid\nset users.example.permission_profiles\n" {
		t.Errorf("set-many printed %q", out)
	}
	cfg, _, err := config.Load(in.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := cfg.Users["example"]
	if u.UID != 1001 || strings.Join(u.PermissionProfiles, ",") != "operator" {
		t.Errorf("persisted user = %+v", u)
	}
	if got := in.zc(t, "config", "get", "users.example.uid"); got != "1001\n" {
		t.Errorf("get uid = %q", got)
	}
}

func TestConfigSeedExampleRPC(t *testing.T) {
	t.Parallel()
	in := newConfigInstall(t)
	d := start(t, in.env, "daemon")
	waitSocket(t, d, in.sock)
	c := dialRPC(t, in.sock)
	c.Initialize()
	r := c.Call("config/set", map[string]any{"prop": "permission_profiles.operator.grants", "value": []string{"config:read"}}, 2)
	if r["error"] != nil {
		t.Fatalf("config/set grants: %v", r)
	}
	r = c.Call("config/set-many", map[string]any{"sets": []map[string]any{
		{"prop": "users.example.uid", "value": 1001},
		{"prop": "users.example.permission_profiles", "value": []string{"operator"}},
	}}, 3)
	res, _ := json.Marshal(r["result"])
	if want := `{"props":["users.example.uid","users.example.permission_profiles"],"set":true}`; string(res) != want {
		t.Fatalf("config/set-many result %s (frame %v), want %s", res, r, want)
	}
	file := string(in.read(t))
	if !strings.Contains(file, "[users.example]\nuid = 1001\npermission_profiles = [\"operator\"]") {
		t.Errorf("config.toml:\n%s", file)
	}
	if v := configGetValue(t, c, "users.example.permission_profiles"); fmt.Sprint(v) != "[operator]" {
		t.Errorf("config/get permission_profiles = %v", v)
	}
}

// One invalid entry refuses the whole batch: the file bytes stay as they were, and the error names the index.
func TestConfigBatchWithInvalidEntry(t *testing.T) {
	t.Parallel()
	in := newConfigInstall(t)
	d := start(t, in.env, "daemon")
	waitSocket(t, d, in.sock)
	before := in.read(t)

	c := dialRPC(t, in.sock)
	c.Initialize()
	r := c.Call("config/set-many", map[string]any{"sets": []map[string]any{
		{"prop": "agents.default.system_prompt", "value": "changed"},
		{"prop": "risk_profiles.supervised.level", "value": "read_only"},
		{"prop": "agents.default.risk_profile", "value": "supervised"},
	}}, 2)
	e, ok := r["error"].(map[string]any)
	if !ok {
		t.Fatalf("want an error, got %v", r)
	}
	data, _ := e["data"].(map[string]any)
	if e["code"] != float64(-32602) || data["index"] != float64(1) || data["prop"] != "risk_profiles.supervised.level" {
		t.Errorf("error %v", e)
	}
	if after := in.read(t); !bytes.Equal(before, after) {
		t.Errorf("the refused batch changed config.toml:\n%s", after)
	}
	if v := configGetValue(t, c, "agents.default.system_prompt"); v != "" {
		t.Errorf("the refused batch reached the live config: system_prompt = %v", v)
	}

	// The same through the CLI.
	out, errOut, code := run(t, in.env, "", "config", "set-many", "agents.default.system_prompt=changed", "agents.default.model_provider=ghost.default")
	if code != 1 || !strings.Contains(errOut, "sets[1]") || !strings.Contains(errOut, "agents.default.model_provider") {
		t.Errorf("CLI bad batch: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if after := in.read(t); !bytes.Equal(before, after) {
		t.Errorf("the refused CLI batch changed config.toml:\n%s", after)
	}
}

func TestConfigValidateCommand(t *testing.T) {
	t.Parallel()
	in := newConfigInstall(t)
	in.zc(t, "config", "path")
	if err := os.MkdirAll(in.root, 0o700); err != nil {
		t.Fatal(err)
	}
	def := string(config.DefaultTOML())
	if !strings.Contains(def, `risk_profile = "supervised"`) {
		t.Fatalf("default config changed shape:\n%s", def)
	}
	broken := strings.Replace(def, `risk_profile = "supervised"`, `risk_profile = "nowhere"`, 1)
	badLine := fmt.Sprint(1 + strings.Count(broken[:strings.Index(broken, "nowhere")], "\n"))
	if err := os.WriteFile(in.cfg, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, in.env, "", "config", "validate")
	if code != 1 || !strings.Contains(out, in.cfg+":"+badLine+": agents.default.risk_profile:") {
		t.Errorf("validate broken: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	syntax := filepath.Join(in.root, "syntax.toml")
	if err := os.WriteFile(syntax, []byte("schema_version = 3\n[agents.default\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code = run(t, in.env, "", "config", "validate", "--file", syntax)
	if code != 1 || !strings.Contains(out, syntax+":2:") || !strings.Contains(out, "agents.default") {
		t.Errorf("validate syntax error: exit %d, stdout %q", code, out)
	}
	// Edits refuse the broken file and say where to look.
	_, errOut, code = run(t, in.env, "", "config", "set", "agents.default.system_prompt", "x")
	if code != 1 || !strings.Contains(errOut, in.cfg+":"+badLine) || !strings.Contains(errOut, "agents.default.risk_profile") {
		t.Errorf("set on a broken file: exit %d, stderr %q", code, errOut)
	}
	if err := os.WriteFile(in.cfg, config.DefaultTOML(), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := in.zc(t, "config", "validate"); out != in.cfg+": ok\n" {
		t.Errorf("validate good = %q", out)
	}
}

// Crash safety (issue 3): kill -9 the daemon at random moments while a client loops config/set-many; after
// every kill config.toml loads and is exactly one batch's content, never a mix, and temp files do not pile up.
func TestConfigCrashSafety(t *testing.T) {
	t.Parallel()
	in := newConfigInstall(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	// Large, different-sized values, so a torn write could not pass for a committed one.
	batches := [2][]map[string]any{
		{{"prop": "agents.default.system_prompt", "value": strings.Repeat("A", 24<<10)},
			{"prop": "risk_profiles.supervised.approval_timeout_secs", "value": 111}},
		{{"prop": "agents.default.system_prompt", "value": strings.Repeat("b", 40<<10)},
			{"prop": "risk_profiles.supervised.approval_timeout_secs", "value": 222}},
	}

	// Warm up: apply each batch twice and keep every committed content seen.
	committed := map[string]bool{}
	d := start(t, in.env, "daemon")
	waitSocket(t, d, in.sock)
	c := dialRPC(t, in.sock)
	c.Initialize()
	for i := range 4 {
		if r := c.Call("config/set-many", map[string]any{"sets": batches[i%2]}, 10+i); r["error"] != nil {
			t.Fatalf("warm-up set-many: %v", r)
		}
		committed[string(in.read(t))] = true
	}
	if len(committed) != 2 {
		t.Fatalf("the two batches give %d distinct files, want 2", len(committed))
	}

	const kills = 20
	tmpGlob := filepath.Join(in.root, ".config.toml.tmp-*")
	midSave := 0
	for k := range kills {
		if k > 0 {
			d = start(t, in.env, "daemon")
			waitSocket(t, d, in.sock)
			// The daemon clears a killed save's temp file at start, before it serves.
			if temps, _ := filepath.Glob(tmpGlob); len(temps) != 0 {
				t.Fatalf("life %d: the daemon started and left temp files: %v", k, temps)
			}
		}
		progress := make(chan int, 1024)
		done := make(chan error, 1)
		go func() { done <- setManyLoop(in.sock, batches, progress) }()
		// Kill once the loop has committed at least one batch in this life, after a random extra delay.
		select {
		case <-progress:
		case err := <-done:
			t.Fatalf("kill %d: the client stopped before its first commit: %v\n%s", k, err, d.stderr.String())
		case <-time.After(20 * time.Second):
			t.Fatalf("kill %d: no commit within 20s", k)
		}
		time.Sleep(time.Duration(rng.IntN(40_000)) * time.Microsecond)
		signal(t, d, syscall.SIGKILL)
		d.wait(t, 10*time.Second)
		if err := <-done; err != nil && !isConnGone(err) {
			t.Fatalf("kill %d: client: %v", k, err)
		}

		raw := in.read(t)
		if _, _, err := config.Load(in.cfg, nil); err != nil {
			t.Fatalf("kill %d: config.toml does not load: %v", k, err)
		}
		if !committed[string(raw)] {
			t.Fatalf("kill %d: config.toml (%d bytes) is not one batch's content", k, len(raw))
		}
		temps, _ := filepath.Glob(tmpGlob)
		midSave += len(temps)
		if len(temps) > 1 {
			t.Fatalf("kill %d: %d temp files accumulate: %v", k, len(temps), temps)
		}
	}

	// A last life: the daemon starts on whatever the kills left, serves the file's content, and a save
	// leaves no temp file behind.
	d = start(t, in.env, "daemon")
	waitSocket(t, d, in.sock)
	c = dialRPC(t, in.sock)
	c.Initialize()
	want := float64(111)
	if strings.Contains(string(in.read(t)), "approval_timeout_secs = 222") {
		want = 222
	}
	if v := configGetValue(t, c, "risk_profiles.supervised.approval_timeout_secs"); v != want {
		t.Errorf("after the kills the daemon serves approval_timeout_secs = %v, file says %v", v, want)
	}
	if r := c.Call("config/set-many", map[string]any{"sets": batches[0]}, 99); r["error"] != nil {
		t.Fatalf("set-many after the kills: %v", r)
	}
	temps, _ := filepath.Glob(tmpGlob)
	t.Logf("%d kills, %d of them mid-save (a temp file was left); %d temp file(s) after the final save", kills, midSave, len(temps))
	if len(temps) > 1 {
		t.Errorf("temp files left after the final save: %v", temps)
	}
}

// setManyLoop initializes a connection and sends config/set-many alternating between batches until the
// connection breaks, reporting each committed batch on progress (without blocking).
func setManyLoop(sock string, batches [2][]map[string]any, progress chan<- int) error {
	nc, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	defer nc.Close()
	c := ndjson.New(nil, nc) // only TryCall: this runs outside the test's goroutine
	send := c.TryCall
	if m, err := send("initialize", map[string]any{"protocol_version": 1}, 1); err != nil {
		return err
	} else if m["result"] == nil {
		return fmt.Errorf("initialize: %v", m)
	}
	for i := 0; ; i++ {
		m, err := send("config/set-many", map[string]any{"sets": batches[i%2]}, i+2)
		if err != nil {
			return err
		}
		if res, _ := m["result"].(map[string]any); res["set"] != true {
			return fmt.Errorf("set-many %d: %v", i, m)
		}
		select {
		case progress <- i:
		default:
		}
	}
}

// isConnGone reports the errors a client sees when the daemon dies under it.
func isConnGone(err error) bool {
	s := err.Error()
	return strings.Contains(s, "EOF") || strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe")
}

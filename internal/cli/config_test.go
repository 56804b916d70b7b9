package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

func TestParseValue(t *testing.T) {
	for in, want := range map[string]string{
		"1001":       `1001`,
		"true":       `true`,
		`["a"]`:      `["a"]`,
		`{"k":"v"}`:  `{"k":"v"}`,
		`"quoted"`:   `"quoted"`,
		"hello":      `"hello"`,
		"be nice":    `"be nice"`,
		"null":       `"null"`,
		"":           `""`,
		"-1.5":       `-1.5`,
		"[unclosed":  `"[unclosed"`,
		"gpt-4.1":    `"gpt-4.1"`,
		` 7 `:        `7`,
		"a\"b":       `"a\"b"`,
		"echo.x.y":   `"echo.x.y"`,
		"01":         `"01"`,
		"1e3":        `1e3`,
		"TRUE":       `"TRUE"`,
		"[1, \"x\"]": `[1, "x"]`,
	} {
		if got := string(parseValue(in)); got != want {
			t.Errorf("parseValue(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	dir := fs.String("config-dir", "", "")
	verbose := fs.Bool("v", false, "")
	pos, err := parseInterspersed(fs, []string{"a.b", "-1", "--config-dir", "/x", "-v", "c", "--", "--config-dir"})
	if err != nil {
		t.Fatal(err)
	}
	if *dir != "/x" || !*verbose {
		t.Errorf("flags: dir=%q v=%v", *dir, *verbose)
	}
	if strings.Join(pos, "|") != "a.b|-1|c|--config-dir" {
		t.Errorf("positionals %q", pos)
	}
	if _, err := parseInterspersed(fs, []string{"--nope"}); err != errUsage {
		t.Errorf("unknown flag: %v, want errUsage", err)
	}
}

func TestFormatEntry(t *testing.T) {
	for _, c := range []struct {
		e    config.Entry
		want string
	}{
		{config.Entry{Prop: "a.b", Value: "x", Default: ""}, `a.b = "x"`},
		{config.Entry{Prop: "a.b", Value: "", Default: ""}, `a.b = ""  # default`},
		{config.Entry{Prop: "n", Value: int64(120), Default: float64(120)}, `n = 120  # default`},
		{config.Entry{Prop: "k", Secret: true, Populated: true}, `k = "***MASKED***"`},
		{config.Entry{Prop: "k", Secret: true}, `k = ""  # default`},
		{config.Entry{Prop: "e", Value: nil}, `e = null  # default`},
		{config.Entry{Prop: "t", Value: nil, Note: "unset: the model's own default"}, `t = null  # default (unset: the model's own default)`},
		{config.Entry{Prop: "m", Value: int64(0), Default: int64(0), Note: "0: the family's default"}, `m = 0  # default (0: the family's default)`},
		{config.Entry{Prop: "m", Value: int64(4096), Default: int64(0), Note: "0: the family's default"}, `m = 4096`},
	} {
		if got := formatEntry(c.e); got != c.want {
			t.Errorf("formatEntry(%+v) = %q, want %q", c.e, got, c.want)
		}
	}
}

// cliEnv is an in-process environment on a fresh install with no daemon. The HOME path is short so the
// endpoint path stays within the socket length limit and dialing it fails with "no such file".
func cliEnv(t *testing.T) (Env, string) {
	t.Helper()
	h, err := os.MkdirTemp("", "zcc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(h) })
	return Env{Home: h, Environ: []string{"HOME=" + h}}, filepath.Join(h, ".zeroclaw")
}

func runCLI(t *testing.T, env Env, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env.Stdout, env.Stderr, env.Stdin = &out, &errb, strings.NewReader("")
	code := Run(t.Context(), env, args)
	return out.String(), errb.String(), code
}

func TestConfigLocalEdits(t *testing.T) {
	env, root := cliEnv(t)
	cfgPath := filepath.Join(root, "config.toml")

	out, _, code := runCLI(t, env, "config", "path")
	if code != 0 || strings.TrimSpace(out) != cfgPath {
		t.Fatalf("path: %q code %d, want %s", out, code, cfgPath)
	}
	out, errOut, code := runCLI(t, env, "config", "get", "agents.default.model_provider")
	if code != 0 || out != "echo.default\n" {
		t.Fatalf("get on a fresh install: %q %q code %d", out, errOut, code)
	}
	// A hand-written comment must survive the edit.
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	commented := "# my own notes\n" + string(raw)
	if err := os.WriteFile(cfgPath, []byte(commented), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, env, "config", "set", "agents.default.system_prompt", "be brief"); code != 0 {
		t.Fatalf("set: code %d: %s", code, errOut)
	}
	raw, _ = os.ReadFile(cfgPath)
	if !strings.HasPrefix(string(raw), "# my own notes\n") || !strings.Contains(string(raw), `system_prompt = "be brief"`) {
		t.Fatalf("file after set:\n%s", raw)
	}
	out, _, _ = runCLI(t, env, "config", "list", "agents.default")
	if !strings.Contains(out, `agents.default.system_prompt = "be brief"`+"\n") ||
		!strings.Contains(out, `agents.default.workspace.path = ""  # default`) {
		t.Errorf("list:\n%s", out)
	}
	out, _, code = runCLI(t, env, "config", "delete", "agents.default.system_prompt")
	if code != 0 || out != "deleted agents.default.system_prompt\n" {
		t.Errorf("delete: %q code %d", out, code)
	}
	raw, _ = os.ReadFile(cfgPath)
	if strings.Contains(string(raw), "system_prompt") || !strings.Contains(string(raw), "# my own notes") {
		t.Errorf("file after delete:\n%s", raw)
	}
	out, _, _ = runCLI(t, env, "config", "delete", "agents.default.system_prompt")
	if !strings.Contains(out, "not set in the file") {
		t.Errorf("second delete: %q", out)
	}

	// A temp file from a killed save is cleared under the install lock, as the daemon does at start.
	stale := filepath.Join(root, ".config.toml.tmp-deadbeef")
	if err := os.WriteFile(stale, []byte("half a fi"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, env, "config", "get", "schema_version"); code != 0 {
		t.Fatalf("get: %s", errOut)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp file still there: %v", err)
	}
}

func TestConfigLocalErrorsCarryHints(t *testing.T) {
	env, root := cliEnv(t)
	cfgPath := filepath.Join(root, "config.toml")

	_, errOut, code := runCLI(t, env, "config", "get", "agents.default.nope")
	if code != 1 || !strings.Contains(errOut, "unknown property") || !strings.Contains(errOut, "Try: zeroclaw config list") {
		t.Errorf("unknown prop: code %d %q", code, errOut)
	}
	before, _ := os.ReadFile(cfgPath)
	_, errOut, code = runCLI(t, env, "config", "set-many", "agents.default.system_prompt=x", "agents.default.risk_profile=ghost")
	if code != 1 || !strings.Contains(errOut, "sets[1]") {
		t.Errorf("bad batch: code %d %q", code, errOut)
	}
	if after, _ := os.ReadFile(cfgPath); !bytes.Equal(before, after) {
		t.Errorf("a refused batch changed the file:\n%s", after)
	}
	// One property is not a batch: the message names the property, not an index into sets.
	_, errOut, code = runCLI(t, env, "config", "set", "gateway.port", "many")
	if code != 1 || strings.Contains(errOut, "sets[") || !strings.Contains(errOut, "gateway.port: invalid value: expected integer") {
		t.Errorf("bad single set: code %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, env, "config", "set", "gateway.nope", "1")
	if code != 1 || strings.Contains(errOut, "sets[") || !strings.Contains(errOut, "Try: zeroclaw config list") {
		t.Errorf("unknown prop in single set: code %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, env, "config", "reload")
	if code != 1 || !strings.Contains(errOut, "Try: zeroclaw daemon") {
		t.Errorf("reload without daemon: code %d %q", code, errOut)
	}
	_, _, code = runCLI(t, env, "config", "set", "only-one-arg")
	if code != 2 {
		t.Errorf("set with one argument: code %d, want 2", code)
	}
	_, errOut, code = runCLI(t, env, "config", "bogus")
	if code != 1 || !strings.Contains(errOut, "unknown subcommand") {
		t.Errorf("unknown subcommand: code %d %q", code, errOut)
	}

	// A broken file: edits are refused with the place to fix.
	if err := os.WriteFile(cfgPath, []byte("schema_version = 3\n[agents.default]\nmodel_provider = 12\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCLI(t, env, "config", "set", "agents.default.system_prompt", "x")
	if code != 1 || !strings.Contains(errOut, cfgPath+":3") || !strings.Contains(errOut, "agents.default.model_provider") {
		t.Errorf("set on a broken file: code %d %q", code, errOut)
	}
}

// While a daemon holds the install (here: this test holds its lock) and nothing answers at the endpoint,
// local edits are refused instead of racing the daemon.
func TestConfigLocalRefusedWhileInstallLocked(t *testing.T) {
	env, root := cliEnv(t)
	layout, err := install.Resolve("", env.Getenv, env.Home)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := install.LockInstall(layout)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	_, errOut, code := runCLI(t, env, "config", "set", "agents.default.system_prompt", "x")
	if code != 1 || !strings.Contains(errOut, "did not answer") || !strings.Contains(errOut, "Try: zeroclaw status") {
		t.Errorf("code %d %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(root, "config.toml")); !os.IsNotExist(err) {
		t.Errorf("config.toml was created while the install was locked: %v", err)
	}
}

// On a fresh install nothing has written config.toml yet: validate says so and checks the default the first start
// will write, instead of failing on a missing file.
func TestConfigValidateFreshInstall(t *testing.T) {
	env, root := cliEnv(t)
	cfgPath := filepath.Join(root, "config.toml")
	out, errOut, code := runCLI(t, env, "config", "validate")
	if code != 0 || !strings.Contains(out, cfgPath+" does not exist yet") || !strings.Contains(out, "default") || errOut != "" {
		t.Errorf("fresh validate: code %d out %q err %q", code, out, errOut)
	}
	if _, err := os.Stat(cfgPath); !os.IsNotExist(err) {
		t.Errorf("validate wrote the config: %v", err)
	}
	// An explicit --file that does not exist is an error with a hint.
	_, errOut, code = runCLI(t, env, "config", "validate", "--file", filepath.Join(root, "nope.toml"))
	if code != 1 || !strings.Contains(errOut, "nope.toml") || !strings.Contains(errOut, "Try:") {
		t.Errorf("missing --file: code %d err %q", code, errOut)
	}
}

func TestConfigValidate(t *testing.T) {
	env, root := cliEnv(t)
	bad := filepath.Join(root, "bad.toml")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("schema_version = 3\n# note\n[agents.default]\nmodel_provider = \"nope.default\"\n"+
		"risk_profile = \"supervised\"\n\n[risk_profiles.supervised]\nlevel = \"read_only\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, env, "config", "validate", "--file", bad)
	if code != 1 {
		t.Fatalf("validate bad: code %d, out %q", code, out)
	}
	for _, want := range []string{bad + ":4: agents.default.model_provider:", bad + ":8: risk_profiles.supervised.level:"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "is invalid: 2 problems\n") {
		t.Errorf("stderr %q", errOut)
	}
	good := filepath.Join(root, "good.toml")
	if err := os.WriteFile(good, config.DefaultTOML(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code = runCLI(t, env, "config", "validate", "--file", good)
	if code != 0 || out != good+": ok\n" {
		t.Errorf("validate good: code %d %q", code, out)
	}
}

// A write that validation refuses changes nothing, so its hint never sends the user to a line of config.toml:
// the line named in the problem is the one the write would have made.
func TestConfigRefusedWriteHintNamesNoLine(t *testing.T) {
	env, root := cliEnv(t)
	if _, errOut, code := runCLI(t, env, "config", "set", "agents.default.system_prompt", "be brief"); code != 0 {
		t.Fatalf("a valid write on a fresh install: exit %d\n%s", code, errOut)
	}
	path := filepath.Join(root, "config.toml")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"config", "set", "agents.default.risk_profile", "full"},
		{"config", "set", "users.alice.permission_profiles", `["operator"]`},
	} {
		_, errOut, code := runCLI(t, env, args...)
		if code != 1 || strings.Contains(errOut, "Try: fix") || !strings.Contains(errOut, "Try: nothing was written to "+path) {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, errOut)
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatalf("a refused write changed config.toml:\n%s", after)
	}
}

// config delete removes a whole map entry (an agent, a price), which "is a table" refused before.
func TestConfigDeleteMapEntry(t *testing.T) {
	env, root := cliEnv(t)
	if _, errOut, code := runCLI(t, env, "config", "set-many", `cost.prices."gpt-4.1".input=1`, `cost.prices."gpt-4.1".output=2`,
		"agents.bob.model_provider=echo.default", "agents.bob.risk_profile=supervised"); code != 0 {
		t.Fatalf("set-many: %d %s", code, errOut)
	}
	for _, prop := range []string{`cost.prices."gpt-4.1"`, "agents.bob"} {
		out, errOut, code := runCLI(t, env, "config", "delete", prop)
		if code != 0 || out != "deleted "+prop+"\n" {
			t.Fatalf("delete %s: %d %q %q", prop, code, out, errOut)
		}
	}
	raw, err := os.ReadFile(filepath.Join(root, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "gpt-4.1") || strings.Contains(string(raw), "bob") {
		t.Fatalf("entries left in the file:\n%s", raw)
	}
	if out, _, code := runCLI(t, env, "config", "delete", "agents.bob"); code != 0 || !strings.Contains(out, "nothing to delete") {
		t.Fatalf("delete of a missing entry: %d %q", code, out)
	}
}

// config migrate --dry-run shows the migrated file with every secret masked, and each warning once.
func TestConfigMigrateDryRunMasksSecrets(t *testing.T) {
	env, root := cliEnv(t)
	v1, err := os.ReadFile("../config/upstream/testdata/v1.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.toml"), v1, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, env, "config", "migrate", "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "schema_version = 3") {
		t.Fatalf("dry run: %d\n%s\n%s", code, errOut, out)
	}
	for _, secret := range []string{"sk-v1-test-global", "telegram-v1-bot-token", "discord-v1-bot-token", "xoxb-v1-slack-token",
		"matrix-v1-access-token", "lark-v1-app-secret", "clawdtalk-api-key", "lark-encrypt-key"} {
		if strings.Contains(out, secret) {
			t.Errorf("the dry run prints the secret %q", secret)
		}
	}
	if !strings.Contains(out, `bot_token = "***MASKED***"`) {
		t.Errorf("no masked secret in the dry run:\n%s", out)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if seen[l] {
			t.Errorf("printed twice: %s", l)
		}
		seen[l] = true
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/zeroclaw-go/zeroclaw/"

// imports lists, for each package of the module, exactly the packages its non-test files import, other than
// the standard library: module packages by their path inside the module, others by their full import path. The
// tree's dependency direction is cmd → cli → daemon → domains → {api, jsonrpc, store, config}; leaves import no
// siblings; a turn reaches storage only through its journal, so agent never imports store (journal does). The
// table is exact: an import it does not list fails, a listed edge no file uses fails, a package missing from it
// (or listed but gone) fails. Files built only for another OS count: the tree is listed for every GOOS in
// layoutOSes.
var imports = map[string][]string{
	"cmd/zeroclaw":                       {"internal/cli", "internal/mcp"},
	"internal/cli":                       {"internal/daemon", "internal/sop", "internal/api", "internal/jsonrpc", "internal/install", "internal/config", "internal/secrets", "internal/visible", "internal/service", "internal/backup", "internal/doctor", "internal/cost", "internal/cron", "internal/logs", "internal/store", "internal/skills", "internal/cli/chat", "internal/cli/client", "internal/cli/hint", "internal/localsock", "internal/mcpserver", "internal/provider", "internal/quickstart", "internal/i18n", "golang.org/x/sys/unix", "internal/pgdb", "internal/store/pgchat"},
	"internal/daemon":                    {"internal/acp", "internal/sop", "internal/sop/engine", "internal/sop/runstore", "internal/sop/sopcron", "internal/sop/trigger", "internal/api", "internal/auth", "internal/clock", "internal/controlplane", "internal/cost", "internal/cron", "internal/errmap", "internal/gateway", "internal/router", "internal/jsonrpc", "internal/listen", "internal/logs", "internal/mcpserver", "internal/memory", "internal/pairing", "internal/provider", "internal/rpc", "internal/install", "internal/config", "internal/secrets", "internal/session", "internal/skills", "internal/store", "internal/tools", "internal/workspace", "internal/doctor", "internal/install/legacy", "internal/localsock", "internal/store/jsonl", "internal/mcp", "internal/i18n", "internal/channel", "internal/channel/telegram", "internal/channel/irc", "internal/channel/mqtt", "internal/heartbeat", "internal/channel/email", "internal/channel/matrix", "internal/agent", "internal/channel/slack", "internal/channel/discord", "internal/cronpg", "internal/lease", "internal/pgdb", "internal/store/pgchat"},
	"internal/gateway":                   {"internal/api", "internal/sop", "internal/sop/engine", "internal/auth", "internal/clock", "internal/config", "internal/errmap", "internal/gateway/dashboard", "internal/jsonrpc", "internal/router", "internal/logs", "internal/pairing", "github.com/coder/websocket", "internal/gateway/webui"},
	"internal/gateway/dashboard":         {"internal/api", "internal/config"},
	"internal/gateway/webui":             {},
	"internal/pairing":                   {"internal/clock", "internal/config", "internal/store"},
	"internal/listen":                    {"internal/api", "internal/jsonrpc"},
	"internal/acp":                       {"internal/api", "internal/auth", "internal/errmap", "internal/jsonrpc", "internal/router", "internal/config", "internal/session", "internal/store", "internal/upload", "internal/visible"},
	"internal/rpc":                       {"internal/api", "internal/sop", "internal/tools", "internal/sop/engine", "internal/auth", "internal/clock", "internal/cost", "internal/cron", "internal/errmap", "internal/jsonrpc", "internal/logs", "internal/memory", "internal/pairing", "internal/router", "internal/config", "internal/session", "internal/store", "internal/upload", "internal/skills", "internal/workspace", "internal/quickstart", "internal/i18n", "internal/provider"},
	"internal/service":                   {"internal/atomicfile"},
	"cmd/zcbench":                        {"internal/rpctest/ndjson", "github.com/pelletier/go-toml/v2", "modernc.org/sqlite", "github.com/eclipse/paho.mqtt.golang", "internal/channel/telegram/tgfake", "internal/channel/discord/discordfake", "github.com/coder/websocket", "internal/channel/email/mailtest", "github.com/emersion/go-imap/v2", "github.com/emersion/go-imap/v2/imapclient", "internal/channel/slack/slackfake", "internal/channel/matrix/matrixfake"},
	"internal/router":                    {"internal/jsonrpc"},
	"internal/mcpserver":                 {"internal/api", "internal/auth", "internal/errmap", "internal/jsonrpc", "internal/router", "github.com/modelcontextprotocol/go-sdk/jsonrpc", "github.com/modelcontextprotocol/go-sdk/mcp", "github.com/google/jsonschema-go/jsonschema"},
	"internal/errmap":                    {"internal/api", "internal/sop", "internal/quickstart", "internal/config", "internal/cron", "internal/jsonrpc", "internal/logs", "internal/memory", "internal/pairing", "internal/session", "internal/skills", "internal/store", "internal/upload", "internal/workspace", "internal/i18n", "internal/tools", "internal/provider"},
	"internal/auth":                      {"internal/config", "internal/api"},
	"internal/session":                   {"internal/api", "internal/agent", "internal/auth", "internal/clock", "internal/cost", "internal/journal", "internal/logs", "internal/memory", "internal/store", "internal/config", "internal/skills", "internal/tools", "internal/workspace", "internal/visible"},
	"internal/upload":                    {"internal/api", "internal/atomicfile", "internal/clock", "internal/dbfile"},
	"internal/controlplane":              {"internal/atomicfile", "internal/clock", "internal/config", "internal/store", "internal/tools"},
	"internal/heartbeat":                 {"internal/api", "internal/clock", "internal/config", "internal/store", "internal/tools", "internal/workspace"},
	"internal/cron":                      {"internal/api", "internal/agent", "internal/clock", "internal/config", "internal/store", "internal/tools", "github.com/robfig/cron/v3"},
	"internal/agent":                     {"internal/api", "internal/provider", "internal/tools", "internal/config", "internal/visible"},
	"internal/sop/runstore":              {"internal/store"},
	"internal/sop/engine":                {"internal/clock", "internal/sop", "internal/sop/runstore"},
	"internal/sop/sopcron":               {"internal/api", "internal/clock", "internal/cron", "internal/sop", "internal/sop/engine"},
	"internal/journal":                   {"internal/provider", "internal/store"},
	"internal/config":                    {"internal/api", "internal/secrets", "internal/atomicfile", "internal/config/tomledit", "internal/config/upstream"},
	"internal/secrets":                   {"internal/atomicfile", "golang.org/x/crypto/chacha20poly1305"},
	"internal/install":                   {"golang.org/x/sys/unix", "golang.org/x/sys/windows"},
	"internal/store":                     {"internal/atomicfile", "internal/dbfile", "internal/groupcommit", "modernc.org/sqlite", "modernc.org/sqlite/lib"},
	"internal/tools":                     {"internal/atomicfile", "internal/dbfile", "internal/memory", "internal/visible", "golang.org/x/sys/unix", "internal/api"},
	"internal/memory":                    {"internal/api", "internal/config", "internal/groupcommit", "internal/store", "internal/pgdb"},
	"internal/pgdb":                      {"github.com/jackc/pgx/v5/pgconn"},
	"internal/pgdb/pgtest":               {"internal/pgdb"},
	"internal/lease":                     {"internal/pgdb"},
	"internal/cronpg":                    {"internal/cron", "internal/lease", "internal/pgdb", "internal/store"},
	"internal/workspace":                 {"internal/api", "internal/atomicfile", "internal/config", "golang.org/x/sys/unix"},
	"internal/skills":                    {"internal/atomicfile", "internal/config", "internal/workspace"},
	"internal/quickstart":                {"internal/api", "internal/config", "internal/i18n"},
	"internal/sop":                       {"internal/atomicfile", "github.com/pelletier/go-toml/v2"},
	"internal/sop/trigger":               {"internal/config", "internal/sop", "internal/sop/engine", "github.com/eclipse/paho.mqtt.golang", "github.com/fsnotify/fsnotify"},
	"internal/channel/email":             {"internal/channel", "internal/config", "github.com/emersion/go-imap/v2", "github.com/emersion/go-imap/v2/imapclient"},
	"internal/channel/email/mailtest":    {"github.com/emersion/go-imap/v2", "github.com/emersion/go-imap/v2/imapclient"},
	"internal/channel/irc":               {"internal/channel", "internal/clock", "internal/config"},
	"internal/channel/matrix":            {"internal/atomicfile", "internal/channel", "internal/config"},
	"internal/channel/matrix/matrixfake": {},
	"internal/channel/chantest":          {"internal/channel", "internal/config", "internal/store"},
	"internal/channel/mqtt":              {"internal/channel", "internal/config", "internal/sop/trigger", "github.com/eclipse/paho.mqtt.golang"},
	"internal/backup":                    {"internal/dbfile", "internal/install", "internal/store"},
	"internal/mcp":                       {"internal/api", "internal/config", "internal/provider", "internal/tools", "github.com/modelcontextprotocol/go-sdk/jsonrpc", "github.com/modelcontextprotocol/go-sdk/mcp", "golang.org/x/sys/unix"},
	"internal/mcp/mcptest":               {"github.com/modelcontextprotocol/go-sdk/mcp"},
	"internal/mcp/mcptest/mcptestserver": {"internal/mcp", "internal/mcp/mcptest"},
	"internal/doctor":                    {"internal/api", "internal/config", "internal/install", "internal/provider", "internal/secrets", "internal/store", "github.com/pelletier/go-toml/v2", "internal/i18n"},
	"internal/visible":                   {},
	"internal/i18n":                      {"golang.org/x/text/feature/plural", "golang.org/x/text/language", "golang.org/x/text/message", "golang.org/x/text/message/catalog"},
	"internal/channel":                   {"internal/clock", "internal/config", "internal/store", "internal/httpsafe"},
	"internal/channel/telegram":          {"internal/channel", "internal/config"},
	"internal/channel/telegram/tgfake":   {},
	"internal/channel/slack":             {"internal/channel", "internal/config", "github.com/coder/websocket"},
	"internal/channel/slack/slackfake":   {"github.com/coder/websocket"},
	"internal/atomicfile":                {},
	"internal/dbfile":                    {},
	"internal/groupcommit":               {},
	"internal/atomicfile/atomicfiletest": {"internal/atomicfile"},
	"internal/api":                       {},
	"internal/clock":                     {},
	"internal/logs":                      {"internal/clock"},
	"internal/cost":                      {"internal/clock", "internal/config", "internal/logs", "internal/store"},
	"internal/clock/clocktest":           {"internal/clock"},
	"internal/jsonrpc":                   {},
	"internal/provider":                  {"internal/httpsafe"},
	"internal/httpsafe":                  {},
	"internal/provider/providertest":     {},
	"internal/rpctest":                   {"internal/clock", "internal/daemon", "internal/rpctest/ndjson", "internal/session", "github.com/coder/websocket", "internal/localsock"},
	"internal/rpctest/ndjson":            {},
	"internal/install/helperproc":        {},
	"internal/e2e":                       {},
	"scripts/startup":                    {},
	"internal/cli/chat":                  {"internal/cli/client", "internal/cli/hint", "internal/api", "internal/atomicfile", "internal/jsonrpc", "internal/visible", "github.com/peterh/liner", "internal/i18n"},
	"internal/cli/client":                {"internal/api", "internal/jsonrpc"},
	"internal/cli/hint":                  {},
	"internal/install/legacy":            {"internal/atomicfile", "internal/install"},
	"internal/localsock":                 {"internal/install", "golang.org/x/sys/unix", "golang.org/x/sys/windows", "github.com/Microsoft/go-winio"},
	"internal/config/upstream":           {},
	"internal/config/tomledit":           {"github.com/pelletier/go-toml/v2", "github.com/pelletier/go-toml/v2/unstable"},
	"internal/store/jsonl":               {"internal/atomicfile", "internal/store"},
	"internal/store/pgchat":              {"internal/lease", "internal/pgdb", "internal/store"},
	"internal/store/chattest":            {"internal/store"},

	// The Discord channel (its own block: the fake's long path would realign the table above).
	"internal/channel/discord":             {"internal/atomicfile", "internal/channel", "internal/config", "github.com/coder/websocket"},
	"internal/channel/discord/discordfake": {"github.com/coder/websocket"},
}

// layoutOSes are the targets whose files are checked; each has files built for it alone.
var layoutOSes = []string{"linux", "darwin", "windows"}

func TestDependencyDirection(t *testing.T) {
	used := map[string]map[string]bool{} // package → import → seen on some GOOS
	for _, goos := range layoutOSes {
		for pkg, imps := range listImports(t, goos) {
			if used[pkg] == nil {
				used[pkg] = map[string]bool{}
			}
			for _, imp := range imps {
				used[pkg][imp] = true
			}
		}
	}
	if len(used) < 10 {
		t.Fatalf("go list saw only %d module packages; the check is not looking at the tree", len(used))
	}
	for _, problem := range checkLayout(imports, used) {
		t.Error(problem)
	}
}

// checkLayout compares the declared edges with the used ones and returns every difference.
func checkLayout(declared map[string][]string, used map[string]map[string]bool) []string {
	var problems []string
	for _, pkg := range slices.Sorted(maps.Keys(used)) {
		allowed, ok := declared[pkg]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s is not in the imports table: add it with the edges it has", pkg))
			continue
		}
		for _, imp := range slices.Sorted(maps.Keys(used[pkg])) {
			if !slices.Contains(allowed, imp) {
				problems = append(problems, fmt.Sprintf("forbidden import edge: %s imports %s", pkg, imp))
			}
		}
		for _, imp := range allowed {
			if !used[pkg][imp] {
				problems = append(problems, fmt.Sprintf("unused edge: %s is allowed to import %s but no file does; remove it from the table", pkg, imp))
			}
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(declared)) {
		if _, ok := used[pkg]; !ok {
			problems = append(problems, fmt.Sprintf("package %s is in the imports table but not in the tree", pkg))
		}
	}
	return problems
}

// listImports returns, for each module package built for goos, its non-standard imports (module packages
// relative to the module).
func listImports(t *testing.T, goos string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Error", "../../...")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list (GOOS=%s): %v", goos, err)
	}
	res := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			// A package with no files for this GOOS is simply absent there; anything else is a broken tree.
			if strings.Contains(p.Error.Err, "build constraints exclude all Go files") {
				continue
			}
			t.Fatalf("go list (GOOS=%s) %s: %s", goos, p.ImportPath, p.Error.Err)
		}
		var imps []string
		for _, imp := range p.Imports {
			if standard(imp) {
				continue
			}
			imps = append(imps, strings.TrimPrefix(imp, module))
		}
		res[strings.TrimPrefix(p.ImportPath, module)] = imps
	}
	return res
}

// standard reports whether path is in the standard library: its first element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// The checker itself: every kind of difference is reported, and an exact table passes.
func TestCheckLayout(t *testing.T) {
	used := map[string]map[string]bool{
		"a": {"b": true},
		"b": {},
		"c": {"b": true},
	}
	exact := map[string][]string{"a": {"b"}, "b": {}, "c": {"b"}}
	if p := checkLayout(exact, used); len(p) != 0 {
		t.Fatalf("exact table reported %q", p)
	}
	loose := map[string][]string{"a": {"b", "c"}, "b": {}, "c": {}, "gone": {}}
	got := checkLayout(loose, used)
	want := []string{
		"unused edge: a is allowed to import c but no file does; remove it from the table",
		"forbidden import edge: c imports b",
		"package gone is in the imports table but not in the tree",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("problems\n got %q\nwant %q", got, want)
	}
	if p := checkLayout(map[string][]string{"a": {"b"}, "b": {}}, used); len(p) != 1 || !strings.Contains(p[0], "package c is not in the imports table") {
		t.Fatalf("missing package: %q", p)
	}
}

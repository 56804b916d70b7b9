package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command errors and their hints are printed in the CLI's locale (LANG, LC_ALL): French here, word for
// word from fr/cli.ftl, with the arguments (a path, a shell's name, a count) in place; the same commands
// without a locale print English.
func TestCLIErrorsInFrench(t *testing.T) {
	env, root := cliEnv(t)
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "bad.toml")
	if err := os.WriteFile(bad, []byte("[agents.default]\nmodel_provider = 5\n\n[risk_profiles.supervised]\nlevel = \"nope\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(root, "missing.toml")
	for _, c := range []struct {
		args     []string
		fr, en   []string
		wantCode int
	}{
		{[]string{"logs", "--limit", "0"},
			[]string{"Erreur : --limit doit valoir au moins 1\n", "Essayez : zeroclaw logs --limit 100\n"},
			[]string{"Error: --limit must be at least 1\n", "Try: zeroclaw logs --limit 100\n"}, 1},
		{[]string{"completion", "tcsh"},
			[]string{"Erreur : pas de complétion pour le shell \"tcsh\"\n", "Essayez : zeroclaw completion bash|zsh|fish\n"},
			[]string{"Error: no completion for shell \"tcsh\"\n"}, 1},
		{[]string{"config", "validate", "--file", missing},
			[]string{"Erreur : config : validate : " + missing + " n'existe pas\n", "Essayez : vérifiez le chemin donné à --file\n"},
			[]string{"Error: config: validate: " + missing + " does not exist\n", "Try: check the path given to --file\n"}, 1},
		{[]string{"config", "validate", "--file", bad},
			[]string{"Erreur : config : " + bad + " n'est pas valide : 2 problèmes\n", "Essayez : corrigez les lignes ci-dessus, puis : zeroclaw config validate\n"},
			[]string{"Error: config: " + bad + " is invalid: 2 problems\n"}, 1},
		{[]string{"pair", "list"}, // the no-daemon text under callError's "pair list: %w"
			[]string{"Erreur : pair list: aucun démon ne tourne sur ", "Essayez : zeroclaw daemon\n"},
			[]string{"Error: pair list: no daemon is running at ", "Try: zeroclaw daemon\n"}, 1},
		{[]string{"costs", "--by", "week"},
			[]string{"Erreur : --by \"week\" : attendu day, agent ou model\n"},
			[]string{"Error: --by \"week\": want day, agent or model\n"}, 1},
	} {
		for _, lang := range []string{"fr_FR.UTF-8", ""} {
			e := env
			e.Environ = append(append([]string(nil), env.Environ...), "LANG="+lang)
			_, errOut, code := runCLI(t, e, c.args...)
			want := c.fr
			if lang == "" {
				want = c.en
			}
			if code != c.wantCode {
				t.Errorf("LANG=%q %v: exit %d, want %d (stderr %q)", lang, c.args, code, c.wantCode, errOut)
			}
			for _, w := range want {
				if !strings.Contains(errOut, w) {
					t.Errorf("LANG=%q %v: stderr lacks %q:\n%s", lang, c.args, w, errOut)
				}
			}
		}
	}
}

// The quickstart planner's problems are printed in the CLI's locale; nothing is written. (quickstart/* answer
// them in English: internal/rpctest's quickstart transcript.)
func TestQuickstartProblemsInFrench(t *testing.T) {
	env, root := cliEnv(t)
	args := []string{"quickstart", "--provider", "echo", "--agent", "helper", "--preset", "balanced", "--yes", "--no-test"}
	if _, errOut, code := runCLI(t, env, args...); code != 0 {
		t.Fatalf("first quickstart: exit %d: %s", code, errOut)
	}
	cfg := filepath.Join(root, "config.toml")
	before, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fr := env
	fr.Environ = append(append([]string(nil), env.Environ...), "LC_ALL=fr_FR.UTF-8")
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{nil, "  agent (name): l'agent `helper` existe déjà\n"},
		{[]string{"--memory", "lucid"}, "  memory: le type de mémoire `lucid` n'est pas pris en charge par ce démon (sqlite, markdown, postgres ou none)\n"},
	} {
		_, errOut, code := runCLI(t, fr, append(append([]string(nil), args...), c.extra...)...)
		if code != 1 || !strings.Contains(errOut, c.want) ||
			!strings.Contains(errOut, "Erreur : quickstart : les réponses ne peuvent pas être appliquées ; rien n'a été modifié sur le disque\n") {
			t.Errorf("quickstart %v: exit %d, stderr lacks %q:\n%s", c.extra, code, c.want, errOut)
		}
		_, errOut, _ = runCLI(t, env, append(append([]string(nil), args...), c.extra...)...)
		if !strings.Contains(errOut, "agent `helper` already exists") && !strings.Contains(errOut, "memory kind `lucid` is not supported") {
			t.Errorf("quickstart %v without a locale: %s", c.extra, errOut)
		}
	}
	if after, _ := os.ReadFile(cfg); string(after) != string(before) {
		t.Fatalf("a refused quickstart changed config.toml")
	}
}

// The messages a command prints about what it did follow the locale too.
func TestCLIMessagesInFrench(t *testing.T) {
	env, root := cliEnv(t)
	cfg := filepath.Join(root, "config.toml")
	fr := env
	fr.Environ = append(append([]string(nil), env.Environ...), "LANG=fr_FR.UTF-8")
	out, errOut, code := runCLI(t, fr, "config", "migrate")
	if want := cfg + " n'existe pas : rien à migrer (le premier démarrage écrit une configuration au schéma v3)\n"; code != 0 || out != want {
		t.Errorf("config migrate on no file: exit %d, stdout %q, want %q (stderr %q)", code, out, want, errOut)
	}
	out, errOut, code = runCLI(t, fr, "config", "validate")
	if want := cfg + " n'existe pas encore : le premier démarrage du démon écrit la configuration par défaut, qui est valide\n"; code != 0 || out != want {
		t.Errorf("config validate on no file: exit %d, stdout %q, want %q (stderr %q)", code, out, want, errOut)
	}
	if _, errOut, code := runCLI(t, env, "config", "get", "gateway.port"); code != 0 {
		t.Fatalf("config get (writes the default): exit %d %s", code, errOut)
	}
	out, errOut, code = runCLI(t, fr, "config", "migrate")
	if want := cfg + " est déjà au schéma v3 : rien à migrer\n"; code != 0 || out != want {
		t.Errorf("config migrate on v3: exit %d, stdout %q, want %q (stderr %q)", code, out, want, errOut)
	}
	if out, _, _ := runCLI(t, env, "config", "migrate"); out != cfg+" is already schema v3: nothing to migrate\n" {
		t.Errorf("config migrate without a locale: %q", out)
	}
}

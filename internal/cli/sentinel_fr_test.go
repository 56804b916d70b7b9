package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
)

// Each sentinel the CLI puts into words has the sentinel's own English as its English entry (so English output
// is unchanged) and a French entry of its own.
func TestSentinelWordsMatchTheirErrors(t *testing.T) {
	fr := i18n.Builtin().For("fr")
	for _, sw := range sentinelWords {
		if en := i18n.English().T(sw.key); en != sentinelWord(sw.err) {
			t.Errorf("%s: English %q, the error says %q", sw.key, en, sentinelWord(sw.err))
		}
		if _, ok := i18n.Builtin().Entry("fr", sw.key); !ok || fr.T(sw.key) == sentinelWord(sw.err) {
			t.Errorf("%s: no French words of its own (%q)", sw.key, fr.T(sw.key))
		}
	}
}

// config's and backup's sentinel errors, printed by the CLI with no daemon, are French under LANG=fr_FR, the
// rest of their text (the property, another package's detail) in place; without a locale, today's English.
func TestSentinelErrorsInFrench(t *testing.T) {
	env, root := cliEnv(t)
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(root, "junk.tar.gz")
	if err := os.WriteFile(junk, []byte("not a backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		fr, en string
	}{
		{[]string{"config", "set", "nope.x", "1"},
			"Erreur : config: set: nope.x: propriété inconnue: nope\n", "Error: config: set: nope.x: unknown property: nope\n"},
		{[]string{"config", "set", "gateway.port", `"abc"`},
			"Erreur : config: set: gateway.port: valeur invalide: expected integer, got string\n",
			"Error: config: set: gateway.port: invalid value: expected integer, got string\n"},
		{[]string{"config", "delete", "agents."},
			"Erreur : config: delete: chemin de propriété invalide: ", "Error: config: delete: invalid property path: "},
		{[]string{"restore", junk, "--config-dir", filepath.Join(root, "target")},
			"Erreur : backup: archive invalide: ", "Error: backup: invalid archive: "},
	} {
		for _, lang := range []string{"fr_FR.UTF-8", ""} {
			e := env
			e.Environ = append(append([]string(nil), env.Environ...), "LANG="+lang)
			_, errOut, code := runCLI(t, e, c.args...)
			want := c.fr
			if lang == "" {
				want = c.en
			}
			if code != 1 || !strings.HasPrefix(errOut, want) {
				t.Errorf("LANG=%q %v: exit %d, stderr does not start with %q:\n%s", lang, c.args, code, want, errOut)
			}
		}
	}
}

// The lines that say what a command did read in English exactly as their Go format did, and in French.
func TestActionLinesEnglishUnchanged(t *testing.T) {
	fr := i18n.Builtin().For("fr")
	for _, c := range []struct {
		key     string
		args    []any
		en, frw string
	}{
		{"cli-costs-summary", []any{"today", "0.1250", "month", "2.0000", "run", "0.0000"},
			"today: $0.1250   this month: $2.0000   this daemon run: $0.0000", "aujourd'hui : 0.1250 $"},
		{"cli-restore-done", []any{"count", 3, "version", "0.8.6", "created", "2026-12-03T10:00:00Z", "path", "/h/.zeroclaw"},
			"restored 3 files (zeroclaw 0.8.6, 2026-12-03T10:00:00Z) into /h/.zeroclaw", "3 fichiers restaurés"},
		{"cli-restore-done", []any{"count", 1, "version", "v", "created", "c", "path", "p"}, "restored 1 files (zeroclaw v, c) into p", "1 fichier restauré"},
		{"cli-sop-validate-ok", []any{"count", 2, "warnings", 0}, "ok: 2 SOP(s), 0 warning(s)", "ok : 2 SOP"},
		{"cli-stop-done", []any{"pid", 42}, "daemon (pid 42) stopped", "démon (pid 42) arrêté"},
		{"cli-config-set-done", []any{"prop", "gateway.port"}, "set gateway.port", "gateway.port réglé"},
	} {
		if got := i18n.English().T(c.key, c.args...); got != c.en {
			t.Errorf("%s in English: %q, want %q", c.key, got, c.en)
		}
		if got := fr.T(c.key, c.args...); !strings.Contains(got, c.frw) {
			t.Errorf("%s in French: %q, want it to contain %q", c.key, got, c.frw)
		}
	}
}

// A labelled record keeps its English layout exactly (memory get, sop show, status), and in French its values
// stay in one column after the longest label.
func TestLabelledRecords(t *testing.T) {
	var b strings.Builder
	printLabelled(&b, nil, "", 1, memoryLabels, []labelled{{"cli-memory-key", "k"}, {"cli-memory-category", "core"},
		{"cli-memory-agent", "a"}, {"cli-memory-created", "t"}})
	if want := "key:      k\ncategory: core\nagent:    a\ncreated:  t\n"; b.String() != want {
		t.Errorf("memory get in English:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	printLabelled(&b, nil, "", 2, sopShowLabels, []labelled{{"cli-sop-show-run", "r1"}, {"cli-sop-show-rev", "abc"}, {"cli-sop-show-gate", "g"}})
	if want := "run:      r1\nsop rev:  abc\ngate:     g\n"; b.String() != want {
		t.Errorf("sop show in English:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	printLabelled(&b, nil, "  ", 1, statusLabels, []labelled{{"cli-status-pid", "7"}, {"cli-status-config-file", "f (toml)"}})
	if want := "  pid:         7\n  config file: f (toml)\n"; b.String() != want {
		t.Errorf("status in English:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	printLabelled(&b, i18n.Builtin().For("fr"), "", 2, sopShowLabels, []labelled{{"cli-sop-show-run", "r1"}, {"cli-sop-show-trigger", "cron"}})
	if want := "exécution :    r1\ndéclencheur :  cron\n"; b.String() != want {
		t.Errorf("sop show in French:\n%q\nwant\n%q", b.String(), want)
	}
}

package cli

import (
	"context"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
)

// allFlagSets runs "zeroclaw CMD -h" and "zeroclaw CMD SUB -h" for every command of the table and every verb
// its help lists, and returns the flag sets they made, by name.
func allFlagSets(t *testing.T) map[string]*flag.FlagSet {
	t.Helper()
	got := map[string]*flag.FlagSet{}
	madeFlagSets.mu.Lock()
	madeFlagSets.fn = func(fs *flag.FlagSet) { got[fs.Name()] = fs }
	madeFlagSets.mu.Unlock()
	defer func() {
		madeFlagSets.mu.Lock()
		madeFlagSets.fn = nil
		madeFlagSets.mu.Unlock()
	}()
	home := t.TempDir()
	env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Home: home,
		Environ: []string{"HOME=" + home, "ZEROCLAW_CONFIG_DIR=" + home + "/nowhere"}}
	ctx := context.Background()
	for _, c := range commands() {
		_ = dispatch(ctx, env, []string{c.name, "-h"})
		for _, s := range subcommandsOf(ctx, env, c.name) {
			_ = dispatch(ctx, env, []string{c.name, s, "-h"})
		}
	}
	return got
}

// Every flag of every command has its help in the catalogue, in English (the same text as its Go usage, so
// the English help is what it always was) and in French: a flag added without both fails here.
func TestEveryFlagHasHelpInEnglishAndFrench(t *testing.T) {
	sets := allFlagSets(t)
	if len(sets) < 60 {
		t.Fatalf("the walk found only %d flag sets: it no longer reaches every command", len(sets))
	}
	cat := i18n.Builtin()
	flags := 0
	used := map[string]bool{}
	for name, fs := range sets {
		fs.VisitAll(func(f *flag.Flag) {
			flags++
			key := flagHelpKey(name, f.Name)
			if key == "" {
				t.Errorf("zeroclaw %s --%s: no catalogue entry: add cli-flag-%s-%s (or the shared cli-flags-%s) to en and fr cli.ftl",
					name, f.Name, strings.ReplaceAll(name, " ", "-"), f.Name, f.Name)
				return
			}
			used[key] = true
			if en := i18n.English().T(key); en != f.Usage {
				t.Errorf("zeroclaw %s --%s: English %s is %q, the flag's usage is %q", name, f.Name, key, en, f.Usage)
			}
			if _, ok := cat.Entry("fr", key); !ok {
				t.Errorf("zeroclaw %s --%s: %s has no French entry", name, f.Name, key)
			}
		})
	}
	if flags < 150 {
		t.Fatalf("checked only %d flags", flags)
	}
	// and the other way: no flag help in the catalogue belongs to no flag
	for _, k := range cat.Keys(i18n.Source) {
		if (strings.HasPrefix(k, "cli-flag-") || strings.HasPrefix(k, "cli-flags-")) && !used[k] {
			t.Errorf("en/cli.ftl: %s is the help of no flag", k)
		}
	}
}

// zeroclaw cron add --help in French: the usage line and every flag's help are the catalogue's French.
func TestCronAddHelpInFrench(t *testing.T) {
	help := func(lang string) string {
		var out, errb strings.Builder
		env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Home: t.TempDir(), Environ: []string{"LANG=" + lang}}
		if code := Run(context.Background(), env, []string{"cron", "add", "--help"}); code != 0 {
			t.Fatalf("LANG=%s cron add --help: exit %d, stderr %q", lang, code, errb.String())
		}
		return out.String()
	}
	fr := help("fr_FR.UTF-8")
	for _, want := range []string{
		"Usage : zeroclaw cron add (--cron EXPR",
		"fuseau horaire IANA de --cron, par ex. Europe/Paris (par défaut : celui de l'hôte du démon)",
		"racine de l'installation (par défaut : $ZEROCLAW_CONFIG_DIR, sinon ~/.zeroclaw)",
		"un nom pour la tâche",
		"  -tz string",
	} {
		if !strings.Contains(fr, want) {
			t.Errorf("French help lacks %q:\n%s", want, fr)
		}
	}
	for _, english := range []string{"Usage:", "IANA time zone", "install root", "a name for the job"} {
		if strings.Contains(fr, english) {
			t.Errorf("French help still has the English %q:\n%s", english, fr)
		}
	}
	en := help("C")
	for _, want := range []string{"Usage: zeroclaw cron add (--cron EXPR", "IANA time zone of --cron, e.g. Europe/Paris (default: the daemon host's)", "a name for the job"} {
		if !strings.Contains(en, want) {
			t.Errorf("English help lacks %q:\n%s", want, en)
		}
	}
}

// Completion reads the help in English whatever the locale: a French user still completes verbs and flags.
func TestCompletionUnderFrenchLocale(t *testing.T) {
	var out strings.Builder
	home := t.TempDir()
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: io.Discard, Home: home,
		Environ: []string{"LANG=fr_FR.UTF-8", "HOME=" + home, "ZEROCLAW_CONFIG_DIR=" + home + "/nowhere"}}
	if code := Run(context.Background(), env, []string{completeCommand, "cron", ""}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if got := strings.Fields(out.String()); !slices.Contains(got, "add") || !slices.Contains(got, "list") {
		t.Errorf("zeroclaw cron <TAB> under LANG=fr_FR: %q, want add and list among them", got)
	}
	out.Reset()
	Run(context.Background(), env, []string{completeCommand, "cron", "add", "--t"})
	if got := strings.Fields(out.String()); !slices.Contains(got, "--tz") {
		t.Errorf("zeroclaw cron add --t<TAB> under LANG=fr_FR: %q, want --tz", got)
	}
}

// A group's usage (with no verb, or asked for) and config's command list are French under LANG=fr_FR.
func TestGroupUsageInFrench(t *testing.T) {
	runFr := func(args ...string) (int, string, string) {
		var out, errb strings.Builder
		env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Home: t.TempDir(), Environ: []string{"LANG=fr_FR.UTF-8"}}
		code := Run(context.Background(), env, args)
		return code, out.String(), errb.String()
	}
	code, out, _ := runFr("config", "--help")
	if code != 0 || !strings.HasPrefix(out, "Usage : zeroclaw config <command>") || !strings.Contains(out, "\nCommandes :\n  get [PROP]") ||
		!strings.Contains(out, "afficher le chemin de config.toml") || strings.Contains(out, "print the config.toml path") {
		t.Errorf("config --help, LANG=fr: exit %d\n%s", code, out)
	}
	code, _, errOut := runFr("pair")
	if code != 2 || !strings.HasPrefix(errOut, "Usage : zeroclaw pair code ") {
		t.Errorf("pair with no verb, LANG=fr: exit %d, stderr %q", code, errOut)
	}
	code, out, _ = runFr("completion", "--help")
	if code != 0 || !strings.HasPrefix(out, "Usage : zeroclaw completion bash|zsh|fish") || !strings.Contains(out, "(après compinit)") {
		t.Errorf("completion --help, LANG=fr: exit %d\n%s", code, out)
	}
}

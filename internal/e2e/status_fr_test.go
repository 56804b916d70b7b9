package e2e

import (
	"strings"
	"testing"
)

// status, version, heartbeat runs and a command's --help speak French under LANG=fr_FR.UTF-8, their values in
// one column; without LANG they print what they always printed.
func TestStatusAndHelpInFrench(t *testing.T) {
	t.Parallel()
	h := home(t)
	fr := env(h, "LANG=fr_FR.UTF-8")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	out := runOK(t, fr, "", "status")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "démon zeroclaw ") || !strings.HasSuffix(lines[0], " en marche") {
		t.Fatalf("status, LANG=fr: first line %q\n%s", lines[0], out)
	}
	for _, want := range []string{"  pid :", "  fichier de config :", "  dossier des données :", "  sessions :"} {
		if !strings.Contains(out, want) {
			t.Errorf("status, LANG=fr lacks %q:\n%s", want, out)
		}
	}
	col := -1
	for _, l := range lines[1:] {
		_, v, ok := strings.Cut(l, " : ")
		if !ok {
			t.Fatalf("status, LANG=fr: line %q has no label", l)
		}
		c := len([]rune(l)) - len([]rune(strings.TrimLeft(v, " ")))
		if col >= 0 && c != col {
			t.Errorf("status, LANG=fr: the value of %q starts at column %d, the others' at %d:\n%s", l, c, col, out)
		}
		col = c
	}
	if strings.Contains(out, "config file:") || strings.Contains(out, "running") {
		t.Errorf("status, LANG=fr still has English:\n%s", out)
	}
	en := runOK(t, env(h), "", "status")
	for _, want := range []string{" running\n", "\n  pid:         ", "\n  config file: ", "\n  sessions:    0 active\n"} {
		if !strings.Contains(en, want) {
			t.Errorf("status in English lacks %q:\n%s", want, en)
		}
	}

	if out := runOK(t, fr, "", "version"); !strings.Contains(out, "(protocole ") {
		t.Errorf("version, LANG=fr: %q", out)
	}
	if out := runOK(t, env(h), "", "version"); !strings.Contains(out, "(protocol ") {
		t.Errorf("version: %q", out)
	}
	out, _, _ = run(t, fr, "", "heartbeat", "runs")
	if !strings.HasPrefix(out, "battement : ") {
		t.Errorf("heartbeat runs, LANG=fr: %q", out)
	}

	out = runOK(t, fr, "", "cron", "add", "--help")
	if !strings.HasPrefix(out, "Usage : zeroclaw cron add ") || !strings.Contains(out, "fuseau horaire IANA de --cron") ||
		strings.Contains(out, "install root") {
		t.Errorf("cron add --help, LANG=fr:\n%s", out)
	}
}

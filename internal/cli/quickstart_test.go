package cli

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// The diff shows only changed lines with their context and never a secret's value, encrypted or not.
func TestWriteDiffMasksSecrets(t *testing.T) {
	before := "# keep\n[a]\nx = 1\n\n[b]\ny = 2\n"
	after := "# keep\n[a]\nx = 1\n\n[providers.models.openai.w]\napi_key = \"sk-live-123\"\ndb_url = \"enc2:abcd\"\n\n[b]\ny = 2\n"
	var out bytes.Buffer
	writeDiff(&out, []byte(before), []byte(after), 1)
	got := out.String()
	for _, bad := range []string{"sk-live-123", "enc2:abcd"} {
		if strings.Contains(got, bad) {
			t.Fatalf("the diff shows a secret %q:\n%s", bad, got)
		}
	}
	for _, want := range []string{"+ [providers.models.openai.w]", `+ api_key = "********"`, "@@"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "- ") {
		t.Fatalf("an add-only change shows a removed line:\n%s", got)
	}
}

// Prompts read a pipe line by line: an empty line takes the default, the end of input cancels, and an endless
// line is cut rather than held.
func TestPrompterOverAPipe(t *testing.T) {
	in := "openai\n\n" + strings.Repeat("z", 1<<20) + "\n"
	var out bytes.Buffer
	p := &prompter{in: bufio.NewReader(strings.NewReader(in)), out: &out}
	if a, err := p.ask("provider", "echo"); err != nil || a != "openai" {
		t.Fatalf("%q %v", a, err)
	}
	if a, err := p.ask("model", "m"); err != nil || a != "m" {
		t.Fatalf("empty line: %q %v, want the default", a, err)
	}
	if a, err := p.ask("name", ""); err != nil || len(a) > 4096 {
		t.Fatalf("long line: %d bytes, %v", len(a), err)
	}
	if _, err := p.ask("more", "x"); !errors.Is(err, errQSCancelled) {
		t.Fatalf("end of input: %v, want cancelled", err)
	}
	if !strings.Contains(out.String(), "provider [echo]: ") {
		t.Fatalf("prompt: %q", out.String())
	}
}

// `zeroclaw onboard` only points at the quickstart (exit 0, nothing read or written); an old flag exits 2.
func TestOnboardIsDeprecated(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Home: dir}
	if code := Run(t.Context(), env, []string{"onboard"}); code != 0 || !strings.Contains(out.String(), "zeroclaw quickstart") {
		t.Fatalf("onboard: code %d, %q %q", code, out.String(), errb.String())
	}
	if code := Run(t.Context(), env, []string{"onboard", "--force"}); code != 2 || !strings.Contains(errb.String(), "Try: zeroclaw quickstart --help") {
		t.Fatalf("onboard --force: code %d, %q", code, errb.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("onboard wrote %v", entries)
	}
}

// At a prompt, a refused agent name is explained with an example and asked again; the flags' answers are not
// asked at all.
func TestQuickstartAsksAgainForABadName(t *testing.T) {
	var out bytes.Buffer
	in := "\n../x\"]\nhelper\nopen\nn\ny\n"
	p := &prompter{in: bufio.NewReader(strings.NewReader(in)), out: &out}
	a := qsAnswers{provider: "echo", memory: "sqlite"}
	if err := a.complete(p, map[string]bool{"provider": true}, Env{}); err != nil {
		t.Fatal(err)
	}
	if a.agent != "helper" || a.model != "echo" || a.preset != "open" || a.pair || !a.service {
		t.Fatalf("answers %+v", a)
	}
	if !strings.Contains(out.String(), "is not allowed") || !strings.Contains(out.String(), "e.g. my_agent") ||
		strings.Contains(out.String(), "Model provider") {
		t.Fatalf("prompts:\n%s", out.String())
	}
}

// FuzzDiffLines: the ops of any two texts give back both texts (' ' and '-' lines the old, ' ' and '+' the
// new), so the diff shown before a write never hides or invents a line.
func FuzzDiffLines(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nx\nc\nd\n")
	f.Add("", "[agents.x]\nmodel = 1\n")
	f.Add("# c\n[a]\n\n[b]\n", "# c\n[a]\n\n[n]\nk = 1\n\n[b]\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		if len(before) > 4096 || len(after) > 4096 {
			return
		}
		a, b := splitLines([]byte(before)), splitLines([]byte(after))
		var gotA, gotB []string
		for _, op := range diffLines(a, b) {
			switch op.kind {
			case ' ':
				gotA, gotB = append(gotA, op.line), append(gotB, op.line)
			case '-':
				gotA = append(gotA, op.line)
			case '+':
				gotB = append(gotB, op.line)
			default:
				t.Fatalf("op kind %q", op.kind)
			}
		}
		if strings.Join(gotA, "\n") != strings.Join(a, "\n") || strings.Join(gotB, "\n") != strings.Join(b, "\n") {
			t.Fatalf("the ops do not rebuild the texts")
		}
	})
}

// A few tables added to a long config give a short diff, not the whole file twice.
func TestWriteDiffOfALongConfigIsShort(t *testing.T) {
	before := "[a]\nx = 1\n" + strings.Repeat("# note\n", 50000) + "[z]\ny = 2\n"
	after := "[a]\nx = 1\n\n[agents.n]\nk = 1\n" + strings.Repeat("# note\n", 50000) + "[z]\ny = 2\n\n[onboard_state]\nquickstart_completed = true\n"
	var out bytes.Buffer
	writeDiff(&out, []byte(before), []byte(after), 2)
	if n := strings.Count(out.String(), "\n"); n > 30 || strings.Contains(out.String(), "\n- ") {
		t.Fatalf("a %d-line diff for 6 added lines:\n%.2000s", n, out.String())
	}
}

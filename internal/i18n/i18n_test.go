package i18n

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestBuiltinParses(t *testing.T) {
	if _, errs := build(nil); len(errs) > 0 {
		t.Fatalf("embedded catalogues: %v", errs)
	}
	if n := len(Builtin().Keys(Source)); n < 100 {
		t.Fatalf("en has %d keys", n)
	}
}

// Every key of English exists in French, with no variable English does not pass; every other locale holds
// only keys English has.
func TestCatalogComplete(t *testing.T) {
	c := Builtin()
	en := c.Keys(Source)
	for _, l := range Locales() {
		for _, k := range c.Keys(l.Code) {
			e, _ := c.Entry(l.Code, k)
			src, ok := c.Entry(Source, k)
			if !ok {
				t.Errorf("%s: %s is not in en", l.Code, k)
				continue
			}
			if v := extraVar(e, src); v != "" {
				t.Errorf("%s: %s uses {$%s}, which en does not pass", l.Code, k, v)
			}
		}
	}
	for _, k := range en {
		if _, ok := c.Entry("fr", k); !ok {
			t.Errorf("fr lacks %s", k)
		}
	}
}

// keyLit is what a catalogue key looks like in Go source.
var keyLit = regexp.MustCompile(`^(cli|doctor|chat)-[a-z0-9]+(-[a-z0-9]+)*$`)

// Every string literal in the module's Go code that looks like a catalogue key is one of English, and every
// key of English is used somewhere (no dead entries).
func TestKeysUsedInCodeExist(t *testing.T) {
	used := map[string][]string{}
	fset := token.NewFileSet()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && keyLit.MatchString(s) {
					used[s] = append(used[s], fset.Position(lit.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := Builtin()
	for k, at := range used {
		if _, ok := c.Entry(Source, k); !ok {
			t.Errorf("%s: %s is not in en/cli.ftl", at[0], k)
		}
	}
	for _, k := range c.Keys(Source) {
		// A flag's help is looked up by a key made from its command and name: cli's
		// TestEveryFlagHasHelpInEnglishAndFrench checks that each of those keys belongs to a flag.
		if strings.HasPrefix(k, "cli-flag-") || strings.HasPrefix(k, "cli-flags-") {
			continue
		}
		if len(used[k]) == 0 {
			t.Errorf("en/cli.ftl: %s is used nowhere", k)
		}
	}
	if len(used) < 100 {
		t.Fatalf("found only %d keys in code", len(used))
	}
}

func TestFormatAndPlurals(t *testing.T) {
	en, fr := Builtin().For("en"), Builtin().For("fr")
	if got := en.T("doctor-file-mode", "path", "/x", "mode", "0644"); got != "/x has mode 0644: other users can read it" {
		t.Errorf("en: %q", got)
	}
	if got := fr.T("doctor-file-mode", "path", "/x", "mode", "0644"); got != "/x a le mode 0644 : d'autres utilisateurs peuvent le lire" {
		t.Errorf("fr: %q", got)
	}
	// CLDR: English "one" is 1 only; French "one" is 0 and 1.
	for _, c := range []struct {
		loc  *Localizer
		n    int
		want string
	}{
		{en, 0, "0 SOPs failed to load and are disabled"},
		{en, 1, "1 SOP failed to load and is disabled"},
		{en, 2, "2 SOPs failed to load and are disabled"},
		{fr, 0, "0 SOP n'a pas pu être chargée et est désactivée"},
		{fr, 1, "1 SOP n'a pas pu être chargée et est désactivée"},
		{fr, 2, "2 SOP n'ont pas pu être chargées et sont désactivées"},
	} {
		if got := c.loc.T("doctor-sop-disabled", "count", c.n); got != c.want {
			t.Errorf("%s n=%d: %q, want %q", c.loc.Code(), c.n, got, c.want)
		}
	}
	// A missing argument shows as {$name}; an unknown key as {key}.
	if got := en.T("doctor-db-ok"); got != "{$path}: integrity ok" {
		t.Errorf("missing arg: %q", got)
	}
	if got := fr.T("no-such-key"); got != "{no-such-key}" {
		t.Errorf("missing key: %q", got)
	}
	var nilLoc *Localizer
	if got := nilLoc.T("cli-try-label", "hint", "x"); got != "Try: x" || nilLoc.Code() != "en" {
		t.Errorf("nil localizer: %q", got)
	}
}

// Spanish has a few keys; the rest comes from English key by key.
func TestFallbackKeyByKey(t *testing.T) {
	es := Builtin().For("es_ES.UTF-8")
	if es.Code() != "es" {
		t.Fatalf("code %q", es.Code())
	}
	if got := es.T("cli-try-label", "hint", "x"); got != "Pruebe: x" {
		t.Errorf("es own key: %q", got)
	}
	if got := es.T("doctor-modes-ok"); got != "the config, the key and the data files are private" {
		t.Errorf("es fallback: %q", got)
	}
	// A plural falls back with English's rule (1 is singular, 0 is not), whatever the locale's own.
	if got := es.T("doctor-sop-disabled", "count", 1); got != "1 SOP failed to load and is disabled" {
		t.Errorf("es plural fallback, 1: %q", got)
	}
	if got := es.T("doctor-sop-disabled", "count", 0); got != "0 SOPs failed to load and are disabled" {
		t.Errorf("es plural fallback, 0: %q", got)
	}
	// Numbers are shown as given, never regrouped by the locale (a pid, a port).
	if got := Builtin().For("fr").T("doctor-daemon-live", "pid", 123456, "path", "/l"); got != "un démon (pid 123456) détient /l" {
		t.Errorf("fr number: %q", got)
	}
	if got := Builtin().For("en").T("cli-doctor-summary", "ok", 100, "warnings", "5%", "errors", 0); got != "100 ok, 5% warnings, 0 errors" {
		t.Errorf("percent in an argument: %q", got)
	}
	if got := Builtin().For("de").T("cli-try-label", "hint", "x"); got != "Try: x" {
		t.Errorf("unknown locale: %q", got)
	}
}

func TestMatchAndDetect(t *testing.T) {
	for in, want := range map[string]string{
		"fr_FR.UTF-8": "fr", "fr-CA": "fr", "FR": "fr", "fr_FR.UTF-8@euro": "fr", "zh_CN.UTF-8": "zh-CN", "zh": "zh-CN",
		"zh_TW.UTF-8": "", "ja_JP": "ja", "C": "", "POSIX": "", "C.UTF-8": "", "": "", "de_DE": "", "en_GB": "en",
	} {
		if got := Match(in); got != want {
			t.Errorf("Match(%q) = %q, want %q", in, got, want)
		}
	}
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		env  func(string) string
		want string
	}{
		{env(), "en"},
		{env("LANG", "fr_FR.UTF-8"), "fr"},
		{env("LANG", "fr_FR.UTF-8", "LC_MESSAGES", "ja_JP.UTF-8"), "ja"},
		{env("LANG", "fr_FR.UTF-8", "LC_MESSAGES", "ja_JP.UTF-8", "LC_ALL", "es_ES.UTF-8"), "es"},
		{env("LANG", "fr_FR.UTF-8", "LC_ALL", "C"), "en"},          // the first one set decides, even C
		{env("LANG", "fr_FR.UTF-8", "LANGUAGE", "de:ja:fr"), "ja"}, // GNU's list, first known entry
		{env("LANG", "C.UTF-8", "LANGUAGE", "fr"), "en"},           // LANGUAGE is ignored under C
		{env("LANG", "de_DE.UTF-8"), "en"},
	} {
		if got := Detect(c.env); got != c.want {
			t.Errorf("Detect = %q, want %q", got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	src := "  stray\n# c\nplain = a {$x} b {\"{\"}lit{\"}\"}\nmulti = first\n    second\n\n      third\nsel = { $n ->\n    [one] one {$n}\n   *[other] many {$n}\n}\n" +
		"-term = refused\nbad = {$}\nattr = x\n    .a = y\ndup = 1\ndup = 2\nsel2 = { $n ->\n  [seven] x\n *[other] y\n}\nnokey\nafter = ok\n"
	entries, errs := Parse(src)
	got := map[string]Entry{}
	for _, e := range entries {
		got[e.Key] = e
	}
	if p := got["plain"].Pattern; render(mustSegments(p), map[string]any{"x": 1}) != "a 1 b {lit}" {
		t.Errorf("plain: %q", p)
	}
	if p := got["multi"].Pattern; p != "first\nsecond\n\n  third" {
		t.Errorf("multi: %q", p)
	}
	if e := got["sel"]; e.Var != "n" || e.Variants["one"] != "one {$n}" || e.Variants["other"] != "many {$n}" {
		t.Errorf("sel: %+v", e)
	}
	if _, ok := got["after"]; !ok || got["dup"].Pattern != "1" {
		t.Errorf("entries after errors: %+v", got)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	sort.Strings(msgs)
	want := []string{"terms are not supported", "unsupported placeable", "attributes are not supported", "duplicate key", "not a plural category", "indented line outside", "expected key = value"}
	for _, w := range want {
		if !strings.Contains(strings.Join(msgs, "\n"), w) {
			t.Errorf("no error %q in %q", w, msgs)
		}
	}
	for _, k := range []string{"-term", "bad", "attr", "sel2"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s was accepted", k)
		}
	}
}

// Catalogues stored in data/ftl (what locales/fetch clients write) override the builtin key by key; an entry
// for an unknown key or with a variable English never passes is refused; an oversized file is refused whole.
func TestOpenOverrides(t *testing.T) {
	dir := t.TempDir()
	write := func(code, body string) {
		os.MkdirAll(filepath.Join(dir, code), 0o700)
		if err := os.WriteFile(filepath.Join(dir, code, CatalogFile), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("fr", "cli-try-label = À essayer : {$hint}\ndoctor-db-ok = {$secret} fuite\nnot-ours = x\n")
	write("ja", strings.Repeat("#", MaxCatalogBytes+1))
	c, errs := Open(dir)
	if got := c.For("fr").T("cli-try-label", "hint", "x"); got != "À essayer : x" {
		t.Errorf("override: %q", got)
	}
	if got := c.For("fr").T("doctor-db-ok", "path", "/p"); got != "/p : intégrité correcte" {
		t.Errorf("refused override used: %q", got)
	}
	joined := ""
	for _, e := range errs {
		joined += e.Error() + "\n"
	}
	for _, w := range []string{"not-ours is not a known message", "uses {$secret}", "larger than"} {
		if !strings.Contains(joined, w) {
			t.Errorf("no error %q in %s", w, joined)
		}
	}
	if got := Builtin().For("fr").T("cli-try-label", "hint", "x"); got != "Essayez : x" {
		t.Errorf("builtin changed: %q", got)
	}
}

package webui

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// Every page renders, names its own script, and that script is an embedded asset.
func TestPagesRender(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Pages {
		if seen[p.Name] {
			t.Fatalf("page %q twice", p.Name)
		}
		seen[p.Name] = true
		html, err := Render(p, "/pfx")
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if !strings.Contains(string(html), `<script src="/pfx/ui/assets/`+p.Script+`" defer>`) {
			t.Fatalf("%s does not load its script %s", p.Name, p.Script)
		}
		if _, _, ok := Asset(p.Script); !ok {
			t.Fatalf("%s: no asset %s", p.Name, p.Script)
		}
	}
	if _, ok := Lookup("head"); ok {
		t.Fatal("the layout's partial templates are pages")
	}
}

// The scripts never turn a string into markup or code: no innerHTML, outerHTML, insertAdjacentHTML,
// document.write, eval or Function; and they name no origin but their own (the SVG namespace and md.js's base
// for parsing relative links are names, never fetched).
func TestAssetsAreSafe(t *testing.T) {
	sink := regexp.MustCompile(`\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\(\s*['"]`)
	origin := regexp.MustCompile(`(?i)\b(?:https?|wss?):\/\/[^\s'"]*`)
	allowed := map[string]bool{"http://www.w3.org/2000/svg": true, "http://invalid.invalid/": true, "ws://": true, "wss://": true} // ws(s):// + location.host
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(files, path)
		if m := sink.Find(b); m != nil {
			t.Errorf("%s: %s", path, m)
		}
		for _, m := range origin.FindAll(b, -1) {
			if !allowed[string(m)] {
				t.Errorf("%s names another origin: %s", path, m)
			}
		}
		if strings.HasSuffix(path, ".html") && regexp.MustCompile(`(?i)<script>|\son[a-z]+=|style=`).Match(b) {
			t.Errorf("%s has an inline script, handler or style (the CSP refuses them)", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAssetRefusesNames(t *testing.T) {
	for _, n := range []string{"", "../webui.go", "a/b.js", `a\b.js`, ".x.js", "webui.go", "nope.js", "app.js.map"} {
		if _, _, ok := Asset(n); ok {
			t.Fatalf("Asset(%q) served", n)
		}
	}
	if _, ct, ok := Asset("app.js"); !ok || ct != "text/javascript; charset=utf-8" {
		t.Fatalf("app.js: %q %v", ct, ok)
	}
}

// The prefix is the one value a page takes from outside (gateway.path_prefix): it is escaped, so even a
// hostile one cannot add markup; and nothing is left unsubstituted.
func TestRenderEscapesPrefix(t *testing.T) {
	p, _ := Lookup("chat")
	html, err := Render(p, `/a"><script>alert(1)</script>`)
	if err != nil {
		t.Fatal(err)
	}
	s := string(html)
	if strings.Contains(s, `"><script>alert`) || !strings.Contains(s, `data-prefix="/a&#34;&gt;&lt;script&gt;`) {
		t.Fatalf("the prefix is not escaped:\n%s", s)
	}
	if strings.Contains(s, "@@") || strings.Contains(s, "<!-- page") {
		t.Fatalf("a placeholder is left:\n%s", s)
	}
	if strings.Count(s, `aria-current="page"`) != 1 || !strings.Contains(s, `<a href="/a&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;/ui/chat" aria-current="page">Chat</a>`) {
		t.Fatalf("the navigation does not mark the chat page:\n%s", s)
	}
}

// Whatever the prefix, the rendered page has exactly the markup of the page without it: every tag of the
// output is one of the page's own, so the prefix can only ever be text or an attribute's value.
func FuzzRenderPrefix(f *testing.F) {
	for _, s := range []string{"", "/zc", `/a"><script>`, "/'onload='x", "/@@BODY@@", "/<!-- page chat -->", "/\x00\xff"} {
		f.Add(s)
	}
	tag := regexp.MustCompile(`<[a-zA-Z/!][^>]*>`)
	p, _ := Lookup("sessions")
	plain, _ := Render(p, "")
	want := len(tag.FindAll(plain, -1))
	f.Fuzz(func(t *testing.T, prefix string) {
		out, err := Render(p, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(tag.FindAll(out, -1)); got != want {
			t.Fatalf("prefix %q: %d tags, want %d", prefix, got, want)
		}
		if strings.Contains(string(out), "@@") && !strings.Contains(prefix, "@@") {
			t.Fatalf("prefix %q left a placeholder", prefix)
		}
	})
}

// Asset serves only the embedded assets: whatever the name, a hit is a file of assets/ by that exact name.
func FuzzAssetName(f *testing.F) {
	for _, s := range []string{"app.js", "../doc.go", "./app.js", "app.js/", "%2e%2e", "templates/layout.html"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		data, _, ok := Asset(name)
		if !ok {
			return
		}
		want, err := fs.ReadFile(files, "assets/"+name)
		if err != nil || string(want) != string(data) || strings.ContainsAny(name, `/\`) {
			t.Fatalf("Asset(%q) served something other than assets/%s", name, name)
		}
	})
}

package tomledit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

func TestEditorCases(t *testing.T) {
	cases := []struct {
		name, in string
		path     Path
		lit      string
		want     string
	}{
		{"replace keeps comment", "[a]\nx = 1 # c\n", Path{"a", "x"}, "2", "[a]\nx = 2 # c\n"},
		{"replace literal string", "[a]\nx = 'v'\n", Path{"a", "x"}, `"w"`, "[a]\nx = \"w\"\n"},
		{"replace multiline array", "[a]\nx = [\n 1,\n 2,\n]\ny = 1\n", Path{"a", "x"}, "[3]", "[a]\nx = [3]\ny = 1\n"},
		{"replace inside inline table", "a = { x = 1, y = 2 }\n", Path{"a", "y"}, "3", "a = { x = 1, y = 3 }\n"},
		{"insert in section", "[a]\nx = 1\n\n[b]\ny = 2\n", Path{"a", "z"}, "3", "[a]\nx = 1\nz = 3\n\n[b]\ny = 2\n"},
		{"insert root before tables", "# top\nv = 1\n\n[a]\nx = 1\n", Path{"w"}, "2", "# top\nv = 1\nw = 2\n\n[a]\nx = 1\n"},
		{"insert dotted", "[a]\nb.x = 1\n", Path{"a", "b", "y"}, "2", "[a]\nb.x = 1\nb.y = 2\n"},
		{"new table no newline at eof", "[a]\nx = 1", Path{"b", "y"}, "2", "[a]\nx = 1\n\n[b]\ny = 2\n"},
		{"new table grouped", "[users.a]\nuid = 1\n\n[gateway]\nport = 1\n", Path{"users", "b", "uid"}, "2",
			"[users.a]\nuid = 1\n\n[users.b]\nuid = 2\n\n[gateway]\nport = 1\n"},
		{"quoted key", "", Path{"m", "gpt-4.1", "k"}, "1", "[m.\"gpt-4.1\"]\nk = 1\n"},
		{"crlf", "[a]\r\nx = 1\r\n", Path{"a", "x"}, "5", "[a]\r\nx = 5\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Set("f", []byte(c.in), c.path, c.lit)
			if err != nil || string(got) != c.want {
				t.Fatalf("Set = %q, %v\nwant %q", got, err, c.want)
			}
		})
	}
	for _, c := range []struct {
		in   string
		path Path
	}{
		{"a = { x = 1 }\n", Path{"a", "y"}},
		{"a = 1\n", Path{"a", "b"}},
		{"[a]\nx = 1\n", Path{"a"}},
		{"[[a]]\nx = 1\n", Path{"a", "y"}},
	} {
		if _, err := Set("f", []byte(c.in), c.path, "1"); !errors.Is(err, ErrNotEditable) {
			t.Errorf("Set(%q, %v) err = %v", c.in, c.path, err)
		}
	}
	out, found, err := Delete("f", []byte("# keep\n[a]\nx = [\n 1,\n] # trailing\ny = 2\n"), Path{"a", "x"})
	if err != nil || !found || string(out) != "# keep\n[a]\ny = 2\n" {
		t.Fatalf("Delete = %q, %v, %v", out, found, err)
	}
}

// flatten lists every non-table value of a decoded TOML document by its path.
func flatten(prefix Path, m map[string]any, out map[string]string) {
	for k, v := range m {
		p := append(prefix[:len(prefix):len(prefix)], k)
		if sub, ok := v.(map[string]any); ok {
			flatten(p, sub, out)
			continue
		}
		out[p.String()] = fmt.Sprintf("%#v", v)
	}
}

func decodeFlat(t *testing.T, raw []byte) (map[string]string, bool) {
	var m map[string]any
	if err := toml.Unmarshal(raw, &m); err != nil {
		return nil, false
	}
	out := map[string]string{}
	flatten(nil, m, out)
	return out, true
}

// commentedConfig is a hand-written config file (the one config's manager tests edit), a seed for FuzzEditor.
const commentedConfig = `# zeroclaw config — hand written
schema_version = 3

[providers.models.echo.default]
model = "echo"   # offline

# the agent
[agents.default]
model_provider = 'echo.default'
risk_profile   = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true
auto_approve = [
  "file_read", # safe
  "time",
]

[permission_profiles.operator]
grants = ["config:update"]
`

func FuzzEditor(f *testing.F) {
	f.Add(commentedConfig, "agents.default.system_prompt", "hello", int64(0), false)
	f.Add(commentedConfig, "risk_profiles.supervised.level", "full", int64(0), true)
	f.Add("[a]\nb.c = 1\nd = { e = 2 }\n", "a.d.e", "", int64(7), false)
	f.Add("x = 1\n[[t]]\ny = 2\n", "t.y", "z", int64(1), true)
	f.Add("[a]\r\nx = 1\r\n", `a."k.1"`, "v\n\"", int64(3), false)
	f.Fuzz(func(t *testing.T, text, prop, s string, n int64, del bool) {
		p, err := ParsePath(prop)
		if err != nil {
			return
		}
		before, ok := decodeFlat(t, []byte(text))
		if !ok {
			return
		}
		var out []byte
		if del {
			var found bool
			out, found, err = Delete("f", []byte(text), p)
			if err != nil {
				return
			}
			after, ok := decodeFlat(t, out)
			if !ok {
				t.Fatalf("delete made the file unparseable:\n%s", out)
			}
			if found {
				delete(before, p.String())
			}
			if fmt.Sprint(before) != fmt.Sprint(after) {
				t.Fatalf("delete %s changed other keys:\n%v\n%v", p, before, after)
			}
			return
		}
		lit, want := Quote(s), fmt.Sprintf("%#v", strings.ToValidUTF8(s, "\uFFFD"))
		if s == "" {
			lit, want = fmt.Sprint(n), fmt.Sprintf("%#v", n)
		}
		out, err = Set("f", []byte(text), p, lit)
		if err != nil {
			return
		}
		after, ok := decodeFlat(t, out)
		if !ok {
			t.Fatalf("set made the file unparseable:\n%s", out)
		}
		if after[p.String()] != want {
			t.Fatalf("set %s: got %s want %s\n%s", p, after[p.String()], want, out)
		}
		before[p.String()] = want
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Fatalf("set %s changed other keys:\n%v\n%v", p, before, after)
		}
	})
}

// Lines the editor adds to a CRLF file end in CRLF like the rest of it (a Windows-edited config stays
// consistent), whether they join a section, start one, or follow a last line without a newline.
func TestEditorKeepsCRLF(t *testing.T) {
	for _, c := range []struct {
		in   string
		path Path
	}{
		{"[a]\r\nx = 1\r\n\r\n[b]\r\ny = 1\r\n", Path{"a", "z"}},
		{"v = 1\r\n[a]\r\nx = 1\r\n", Path{"w"}},
		{"[a]\r\nx = 1\r\n", Path{"c", "d", "z"}},
		{"[a]\r\nb.x = 1\r\n", Path{"a", "b", "y"}},
		{"[a]\r\nx = 1", Path{"a", "z"}},
		{"[a]\r\nx = 1", Path{"c", "z"}},
	} {
		out, err := Set("f", []byte(c.in), c.path, "2")
		if err != nil {
			t.Fatalf("Set(%q, %v): %v", c.in, c.path, err)
		}
		if n, crlf := strings.Count(string(out), "\n"), strings.Count(string(out), "\r\n"); n != crlf || n <= strings.Count(c.in, "\n") {
			t.Errorf("Set(%q, %v) = %q: bare LF line endings in a CRLF file", c.in, c.path, out)
		}
	}
	out, err := EnsureTable("f", []byte("[a]\r\nx = 1\r\n"), Path{"u", "v"})
	if err != nil || strings.Count(string(out), "\n") != strings.Count(string(out), "\r\n") {
		t.Fatalf("EnsureTable = %q, %v", out, err)
	}
}

package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
)

// proseWord is an English function word: a message literal holding one is a sentence for a person, which
// belongs in the catalogue (say, hinted, loc.T), not in Go. Command lines ("zeroclaw sessions list",
// "--limit 100") hold none.
var proseWord = regexp.MustCompile(`(?i)\b(the|a|an|is|are|was|not|no|or|and|then|of|to|by|its|it|did|does|cannot|needs|want|with|without|from|first|only|your|you|yet|nothing)\b`)

// englishOnlyAllowed are literals the scan finds that are never shown to a person as they are.
var englishOnlyAllowed = map[string]string{
	"no change":                   "errUnchanged: a sentinel the edit loop checks with errors.Is, never printed",
	"agent: Ctrl-C at the prompt": "errPromptInterrupted: a sentinel the chat checks with errors.Is, never printed",
}

// hintKey is a catalogue key given where a hint goes (callError's hints): put into words, not prose.
var hintKey = regexp.MustCompile(`^(cli|chat)-[a-z0-9]+(-[a-z0-9]+)*$`)

// TestNoEnglishOnlyMessages fails when an error or hint of the CLI is an English sentence written in Go:
// errors.New / fmt.Errorf with prose, a hint.With or hint.Error hint with prose, a callError hint with prose,
// a quickstart planner problem given as text, a message printed (fmt.Fprint*, the chat's printErr) in prose.
// A wrapper that only names the operation ("config: validate: %w") is not prose.
func TestNoEnglishOnlyMessages(t *testing.T) {
	var files []string
	// In the quickstart package only the planner's problems are checked: its other errors are JSON-RPC
	// messages (protocol text, English as upstream's).
	onlyProblems := map[string]bool{}
	for _, dir := range []string{".", "chat", filepath.Join("..", "quickstart")} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
				onlyProblems[f] = dir != "." && dir != "chat"
			}
		}
	}
	if len(files) < 30 {
		t.Fatalf("found only %d files", len(files))
	}
	fset := token.NewFileSet()
	checked := 0
	// the English of every flag's help in the catalogue
	flagHelps := map[string]bool{}
	for _, k := range i18n.Builtin().Keys(i18n.Source) {
		if strings.HasPrefix(k, "cli-flag-") || strings.HasPrefix(k, "cli-flags-") {
			flagHelps[i18n.English().T(k)] = true
		}
	}
	flagUsages := 0
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		flag := func(what string, e ast.Expr) {
			for _, lit := range literals(e) {
				checked++
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					continue
				}
				if _, ok := englishOnlyAllowed[s]; ok || hintKey.MatchString(s) {
					continue
				}
				if w := proseWord.FindString(stripVerbs(s)); w != "" {
					t.Errorf("%s: %s %q is English prose (%q): put it in the catalogue (en and fr cli.ftl) and use say/hinted",
						fset.Position(lit.Pos()), what, s, w)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				name := callName(n.Fun)
				if onlyProblems[p] && name != "p.failWith" {
					return true
				}
				switch name {
				case "errors.New", "fmt.Errorf":
					if len(n.Args) > 0 {
						flag(name, n.Args[0])
					}
				case "p.failWith": // the quickstart planner's problem from another package's error
					if len(n.Args) == 3 {
						flag("quickstart problem", n.Args[2])
					}
				case "fmt.Fprintf", "fmt.Fprintln", "fmt.Fprint": // a message printed for the user
					if len(n.Args) > 1 {
						flag("printed message", n.Args[1])
					}
				case "ch.printErr":
					if len(n.Args) > 0 {
						flag("printed message", n.Args[0])
					}
				case "fs.String", "fs.Bool", "fs.Int", "fs.Int64", "fs.Uint", "fs.Float64", "fs.Duration", "fs.StringVar", "fs.BoolVar",
					"fs.IntVar", "fs.DurationVar", "fs.Var", "fs.Func", "fs.BoolFunc", "flags.String", "flags.Bool", "flags.Int", "flags.Duration":
					// a flag's help: the English of a cli-flag(s)- entry, which newFlagSet prints in the locale's words
					if len(n.Args) >= 3 && !onlyProblems[p] {
						// (a help built from a constant is left to TestEveryFlagHasHelpInEnglishAndFrench, which sees it run)
						if u, ok := constString(n.Args[len(n.Args)-1]); ok {
							checked++
							flagUsages++
							if !flagHelps[u] {
								t.Errorf("%s: flag help %q is in no cli-flag-SET-FLAG (or cli-flags-FLAG) entry of en and fr cli.ftl",
									fset.Position(n.Pos()), u)
							}
						}
					}
				case "hint.With":
					if len(n.Args) == 2 {
						flag("hint", n.Args[1])
					}
				case "callError":
					if len(n.Args) == 3 {
						if m, ok := n.Args[2].(*ast.CompositeLit); ok {
							for _, el := range m.Elts {
								if kv, ok := el.(*ast.KeyValueExpr); ok {
									flag("callError hint", kv.Value)
								}
							}
						}
					}
				}
			case *ast.CompositeLit:
				if !onlyProblems[p] && callName(n.Type) == "hint.Error" {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok && callName(kv.Key) == "Hint" {
							flag("hint", kv.Value)
						}
					}
				}
			case *ast.ValueSpec:
				// a named message ("const note = ..."), printed somewhere else; a synopsis is a command line
				for i, name := range n.Names {
					if !onlyProblems[p] && i < len(n.Values) && !strings.HasSuffix(name.Name, "Synopsis") {
						if lit, ok := n.Values[i].(*ast.BasicLit); ok {
							flag("named string "+name.Name, lit)
						}
					}
				}
				// the hint maps given to callError by name (jobHints, memoryHints...)
				for i, name := range n.Names {
					if strings.HasSuffix(name.Name, "Hints") && i < len(n.Values) {
						if m, ok := n.Values[i].(*ast.CompositeLit); ok {
							for _, el := range m.Elts {
								if kv, ok := el.(*ast.KeyValueExpr); ok {
									flag("callError hint", kv.Value)
								}
							}
						}
					}
				}
			}
			return true
		})
	}
	if flagUsages < 100 {
		t.Fatalf("saw only %d flag helps: the scan no longer sees the flags", flagUsages)
	}
	if checked < 50 {
		t.Fatalf("checked only %d literals: the scan no longer sees the CLI's errors", checked)
	}
}

// The scan itself: prose is found, a command line or an operation prefix is not.
func TestProseWordDetects(t *testing.T) {
	for _, s := range []string{"config: the built-in default is invalid: %w", "zeroclaw cron list (a job is named by its id)", "no daemon"} {
		if proseWord.FindString(stripVerbs(s)) == "" {
			t.Errorf("%q not seen as prose", s)
		}
	}
	for _, s := range []string{"config: validate: %w", "zeroclaw sessions list", "--limit 100", `zeroclaw agent -m "hello"`, "connect %s: %w", "kill %d", "zeroclaw costs --by model"} {
		if w := proseWord.FindString(stripVerbs(s)); w != "" {
			t.Errorf("%q seen as prose (%q)", s, w)
		}
	}
}

var (
	verb    = regexp.MustCompile(`%(\[\d+\])?[-+# 0]*\d*(\.\d+)?[a-zA-Z%]`)
	cliFlag = regexp.MustCompile(`(^|\s)--?[a-z][a-z0-9-]*`)
)

// stripVerbs drops the format verbs and the flags (--by, -a) of a literal: what is left is its words.
func stripVerbs(s string) string { return cliFlag.ReplaceAllString(verb.ReplaceAllString(s, " "), " ") }

// literals returns the string literals of e, through concatenations and parentheses.
func literals(e ast.Expr) []*ast.BasicLit {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			return []*ast.BasicLit{e}
		}
	case *ast.BinaryExpr:
		return append(literals(e.X), literals(e.Y)...)
	case *ast.ParenExpr:
		return literals(e.X)
	case *ast.CallExpr:
		if callName(e.Fun) == "fmt.Sprintf" && len(e.Args) > 0 {
			return literals(e.Args[0])
		}
	}
	return nil
}

// constString is e's value when e is string literals only (concatenated), else false.
func constString(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		}
	case *ast.BinaryExpr:
		x, okx := constString(e.X)
		y, oky := constString(e.Y)
		return x + y, okx && oky && e.Op == token.ADD
	case *ast.ParenExpr:
		return constString(e.X)
	}
	return "", false
}

func callName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	case *ast.UnaryExpr:
		return callName(e.X)
	}
	return ""
}

// Package i18n holds the user-facing messages of the CLI and the daemon (hints, doctor findings and fixes,
// approval prompts) in Fluent catalogues, one per locale, embedded in the binary: English and French are
// complete, the other locales of upstream's registry fall back to English key by key. The catalogue, its
// lookup and CLDR plural rules are golang.org/x/text's (message, message/catalog, feature/plural); this
// package reads the .ftl files into it. Protocol field names and log keys are never translated.
package i18n

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
)

// Source is the locale every catalogue is written from; a key missing elsewhere is taken from it.
const Source = "en"

// CatalogFile is the name of the catalogue file in each locale's directory (upstream's cli catalogue).
const CatalogFile = "cli.ftl"

// MaxCatalogBytes bounds a catalogue read from disk: a larger file is refused whole.
const MaxCatalogBytes = 1 << 20

//go:embed locales/*/cli.ftl
var builtinFS embed.FS

// Catalog is a set of bundles, one per locale, with per-key fallback to English. It is immutable once built
// and safe for concurrent use.
type Catalog struct {
	cat  *catalog.Builder
	keys map[string]map[string]Entry // locale -> key -> entry
	// vars orders each key's variables (English's, sorted): {$name} becomes the positional %[n]s.
	vars map[string][]string
}

var (
	builtinOnce sync.Once
	builtin     *Catalog
)

// Builtin returns the catalogue embedded in the binary. It panics if an embedded file does not parse, which
// TestBuiltinParses rules out.
func Builtin() *Catalog {
	builtinOnce.Do(func() {
		c, errs := build(nil)
		if len(errs) > 0 {
			panic(fmt.Sprintf("i18n: embedded catalogue: %v", errors.Join(errs...)))
		}
		builtin = c
	})
	return builtin
}

// Open returns the builtin catalogue with the messages of <dir>/<locale>/cli.ftl laid over it, key by key,
// as upstream does with the catalogues locales/fetch downloads into data/ftl. An override is kept only for a
// key English has, and only when it uses no variable English does not pass; the other entries are returned
// as errors and ignored. A missing directory or file is not an error.
func Open(dir string) (*Catalog, []error) {
	over := map[string][]Entry{}
	var errs []error
	for _, l := range Locales() {
		p := filepath.Join(dir, l.Code, CatalogFile)
		src, err := readBounded(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("i18n: %s: %w", p, err))
			continue
		}
		entries, perrs := Parse(src)
		for _, e := range perrs {
			errs = append(errs, fmt.Errorf("i18n: %s: %w", p, e))
		}
		over[l.Code] = entries
	}
	c, berrs := build(over)
	return c, append(errs, berrs...)
}

func readBounded(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxCatalogBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxCatalogBytes {
		return "", fmt.Errorf("larger than %d bytes", MaxCatalogBytes)
	}
	return string(b), nil
}

// build parses the embedded catalogues and lays over on them.
func build(over map[string][]Entry) (*Catalog, []error) {
	c := &Catalog{cat: catalog.NewBuilder(catalog.Fallback(language.English)), keys: map[string]map[string]Entry{},
		vars: map[string][]string{}}
	var errs []error
	for _, l := range Locales() {
		b, err := builtinFS.ReadFile("locales/" + l.Code + "/" + CatalogFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("i18n: no embedded catalogue for %s", l.Code))
			continue
		}
		entries, perrs := Parse(string(b))
		for _, e := range perrs {
			errs = append(errs, fmt.Errorf("i18n: embedded %s/%s: %w", l.Code, CatalogFile, e))
		}
		m := map[string]Entry{}
		for _, e := range entries {
			m[e.Key] = e
		}
		c.keys[l.Code] = m
	}
	en := c.keys[Source]
	for code, entries := range over {
		for _, e := range entries {
			src, ok := en[e.Key]
			if !ok {
				errs = append(errs, fmt.Errorf("i18n: %s: %s is not a known message", code, e.Key))
				continue
			}
			if v := extraVar(e, src); v != "" {
				errs = append(errs, fmt.Errorf("i18n: %s: %s uses {$%s}, which it is never given", code, e.Key, v))
				continue
			}
			c.keys[code][e.Key] = e
		}
	}
	for k, e := range en {
		vars := make([]string, 0, len(e.Vars()))
		for v := range e.Vars() {
			vars = append(vars, v)
		}
		sort.Strings(vars)
		c.vars[k] = vars
	}
	// English is also the root (und): a key a locale lacks is looked up in its parent chain, which ends
	// there, so the fallback is key by key.
	for _, code := range append([]string{"und"}, localeCodes()...) {
		src := code
		if code == "und" {
			src = Source
		}
		tag := language.MustParse(code)
		for k, e := range c.keys[src] {
			if err := c.cat.Set(tag, k, c.compile(e, code == "und")); err != nil {
				errs = append(errs, fmt.Errorf("i18n: %s: %s: %w", code, k, err))
			}
		}
	}
	return c, errs
}

func localeCodes() []string {
	var out []string
	for _, l := range Locales() {
		out = append(out, l.Code)
	}
	return out
}

// compile turns an entry into a catalogue message: each {$name} a positional %[n]s of the key's variables
// (formatted as text, so that no number is regrouped by the locale), a plural selector a plural.Selectf on the
// raw number, passed after them. The root (und) has no CLDR categories: there English's one is =1 and zero =0.
func (c *Catalog) compile(e Entry, root bool) catalog.Message {
	vars := c.vars[e.Key]
	format := func(p string) string {
		var b strings.Builder
		for _, s := range mustSegments(p) {
			if !s.isVar {
				b.WriteString(strings.ReplaceAll(s.text, "%", "%%"))
				continue
			}
			b.WriteString(fmt.Sprintf("%%[%d]s", slices.Index(vars, s.text)+1))
		}
		return b.String()
	}
	if e.Var == "" {
		return catalog.String(format(e.Pattern))
	}
	var cases []any
	for _, cat := range []string{"zero", "one", "two", "few", "many"} {
		p, ok := e.Variants[cat]
		switch {
		case !ok:
		case root && cat == "zero":
			cases = append(cases, "=0", format(p))
		case root && cat == "one":
			cases = append(cases, "=1", format(p))
		case !root:
			cases = append(cases, cat, format(p))
		}
	}
	cases = append(cases, "other", format(e.Variants["other"]))
	return plural.Selectf(len(vars)+1, "%d", cases...)
}

// extraVar returns a variable e uses that src (the English entry) does not, or "".
func extraVar(e, src Entry) string {
	have := src.Vars()
	var extra []string
	for v := range e.Vars() {
		if !have[v] {
			extra = append(extra, v)
		}
	}
	sort.Strings(extra)
	if len(extra) == 0 {
		return ""
	}
	return extra[0]
}

// Keys returns the keys of a locale's catalogue as this Catalog holds them, sorted.
func (c *Catalog) Keys(code string) []string {
	out := make([]string, 0, len(c.keys[code]))
	for k := range c.keys[code] {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Entry returns a locale's own entry for key (no fallback).
func (c *Catalog) Entry(code, key string) (Entry, bool) {
	e, ok := c.keys[code][key]
	return e, ok
}

// For returns a Localizer for a registry code (see Match); an unknown code gives English.
func (c *Catalog) For(code string) *Localizer {
	if m := Match(code); m != "" {
		code = m
	} else {
		code = Source
	}
	return &Localizer{c: c, code: code, p: message.NewPrinter(language.MustParse(code), message.Catalog(c.cat))}
}

// Localizer formats the messages of one locale. A nil *Localizer formats English.
type Localizer struct {
	c    *Catalog
	code string
	p    *message.Printer
}

// English is the builtin English localizer.
func English() *Localizer { return Builtin().For(Source) }

// Code returns the registry code the localizer formats.
func (l *Localizer) Code() string {
	if l == nil {
		return Source
	}
	return l.code
}

// T formats the message key with args given as name, value pairs: T("doctor-file-mode", "path", p, "mode",
// "0644"). A plural message picks its variant by its selector's argument (a number) under the locale's CLDR
// rules. A variable not given shows as {$name}; a key no catalogue has is returned as {key}, as upstream does.
func (l *Localizer) T(key string, args ...any) string {
	if l == nil {
		l = English()
	}
	vars, ok := l.c.vars[key]
	if !ok {
		return "{" + key + "}"
	}
	named := make(map[string]any, len(args)/2)
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok {
			named[k] = args[i+1]
		}
	}
	pos := make([]any, len(vars)+1)
	for i, v := range vars {
		if a, ok := named[v]; ok {
			pos[i] = fmt.Sprint(a)
		} else {
			pos[i] = "{$" + v + "}"
		}
	}
	pos[len(vars)] = 0
	if v := l.selectorVar(key); v != "" {
		if n, ok := named[v]; ok {
			pos[len(vars)] = n
		}
	}
	return l.p.Sprintf(key, pos...)
}

// selectorVar is the plural selector's variable of key in the localizer's locale, else in English.
func (l *Localizer) selectorVar(key string) string {
	if e, ok := l.c.keys[l.code][key]; ok && e.Var != "" {
		return e.Var
	}
	if e, ok := l.c.keys[Source][key]; ok {
		return e.Var
	}
	return ""
}

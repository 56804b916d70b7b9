// Package i18n holds the user-facing messages of the CLI and the daemon (hints, doctor findings and fixes,
// approval prompts) in Fluent catalogues, one per locale, embedded in the binary: English and French are
// complete, the other locales of upstream's registry fall back to English key by key. Bundles, locale matching
// and CLDR plural rules are github.com/nicksnyder/go-i18n's; this package reads the .ftl files into it.
// Protocol field names and log keys are never translated.
package i18n

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"github.com/nicksnyder/go-i18n/v2/i18n/template"
	"golang.org/x/text/language"
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
	bundle *goi18n.Bundle
	keys   map[string]map[string]Entry // locale -> key -> entry
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
	c := &Catalog{bundle: goi18n.NewBundle(language.English), keys: map[string]map[string]Entry{}}
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
	for _, l := range Locales() {
		m := c.keys[l.Code]
		if len(m) == 0 {
			continue
		}
		msgs := make([]*goi18n.Message, 0, len(m))
		for _, e := range m {
			msgs = append(msgs, message(e))
		}
		if err := c.bundle.AddMessages(language.MustParse(l.Code), msgs...); err != nil {
			errs = append(errs, fmt.Errorf("i18n: %s: %w", l.Code, err))
		}
	}
	return c, errs
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

func message(e Entry) *goi18n.Message {
	m := &goi18n.Message{ID: e.Key, Other: e.Pattern}
	if e.Var != "" {
		m.Zero, m.One, m.Two = e.Variants["zero"], e.Variants["one"], e.Variants["two"]
		m.Few, m.Many, m.Other = e.Variants["few"], e.Variants["many"], e.Variants["other"]
	}
	return m
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
	return &Localizer{c: c, code: code, l: goi18n.NewLocalizer(c.bundle, code, Source)}
}

// Localizer formats the messages of one locale. A nil *Localizer formats English.
type Localizer struct {
	c    *Catalog
	code string
	l    *goi18n.Localizer
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

// fluent is the go-i18n template parser for Fluent patterns: {$name} is replaced by the argument, a missing
// one is shown as {$name}.
type fluent struct{}

func (fluent) Cacheable() bool { return true }

func (fluent) Parse(src, _, _ string) (template.ParsedTemplate, error) {
	segs, err := segments(src)
	if err != nil {
		return nil, err
	}
	return parsed(segs), nil
}

type parsed []segment

func (p parsed) Execute(data any) (string, error) {
	args, _ := data.(map[string]any)
	return render(p, args), nil
}

// T formats the message key with args given as name, value pairs: T("doctor-file-mode", "path", p, "mode",
// "0644"). A plural message picks its variant by its selector's argument under the locale's CLDR rules. A key
// no catalogue has is returned as {key}, as upstream does.
func (l *Localizer) T(key string, args ...any) string {
	if l == nil {
		l = English()
	}
	data := make(map[string]any, len(args)/2)
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok {
			data[k] = args[i+1]
		}
	}
	lc := &goi18n.LocalizeConfig{MessageID: key, TemplateData: data, TemplateParser: fluent{}}
	if v := l.selectorVar(key); v != "" {
		if n, ok := data[v]; ok {
			lc.PluralCount = n
		}
	}
	s, err := l.l.Localize(lc)
	if s == "" && err != nil {
		return "{" + key + "}"
	}
	return s
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

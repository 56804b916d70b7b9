package i18n

import "strings"

// Locale is one entry of the locale registry: upstream's locales.toml, in its order (the first is the source).
type Locale struct {
	Code  string
	Label string
}

// Locales returns the registry: the locales that have a catalogue.
func Locales() []Locale {
	return []Locale{{"en", "English"}, {"fr", "Français"}, {"ja", "日本語"}, {"es", "Español"}, {"zh-CN", "中文"}}
}

// Known reports whether code is exactly a registry code.
func Known(code string) bool {
	for _, l := range Locales() {
		if l.Code == code {
			return true
		}
	}
	return false
}

// Normalize turns a POSIX locale name into a BCP 47-ish tag: the codeset and modifier are dropped and _
// becomes - ("fr_FR.UTF-8@euro" -> "fr-FR"). "C" and "POSIX" give "".
func Normalize(name string) string {
	name, _, _ = strings.Cut(name, ".")
	name, _, _ = strings.Cut(name, "@")
	name = strings.ReplaceAll(strings.TrimSpace(name), "_", "-")
	if name == "C" || name == "POSIX" {
		return ""
	}
	return name
}

// Match returns the registry code for a locale name or tag, or "" when none fits: an exact code (any case),
// else the language alone ("fr-CA" -> "fr"; upstream has no such fallback). Chinese matches zh-CN only for
// Simplified Chinese (zh, zh-CN, zh-SG, zh-Hans...), not zh-TW or zh-HK.
func Match(name string) string {
	tag := Normalize(name)
	if tag == "" {
		return ""
	}
	for _, l := range Locales() {
		if strings.EqualFold(l.Code, tag) {
			return l.Code
		}
	}
	lang, region, _ := strings.Cut(tag, "-")
	lang = strings.ToLower(lang)
	if lang == "zh" {
		switch strings.ToLower(region) {
		case "", "cn", "sg", "hans", "hans-cn":
			return "zh-CN"
		}
		return ""
	}
	for _, l := range Locales() {
		if l.Code == lang {
			return l.Code
		}
	}
	return ""
}

// Detect picks the CLI's locale from the environment as POSIX orders it: LC_ALL, else LC_MESSAGES, else LANG
// (the first one set decides; C or POSIX means English). When that locale is not C, GNU's LANGUAGE list (a:b:c)
// is tried first, as gettext does. What matches no registry locale gives English.
func Detect(getenv func(string) string) string {
	posix := ""
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(k); v != "" {
			posix = v
			break
		}
	}
	if Normalize(posix) == "" {
		return Source
	}
	for _, cand := range strings.Split(getenv("LANGUAGE"), ":") {
		if m := Match(cand); m != "" {
			return m
		}
	}
	if m := Match(posix); m != "" {
		return m
	}
	return Source
}

package cli

import (
	"errors"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/backup"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
)

// text is a message of the catalogue with its arguments (name, value pairs), put into words when it is
// printed: Error is its English, In a locale's. An argument that is itself a text, or an error holding one at
// its top, is put into words in the same locale; the errors among the arguments are what it wraps.
type text struct {
	key  string
	args []any
}

// say returns the message key with args as an error, for Run to print in the CLI's locale.
func say(key string, args ...any) *text { return &text{key: key, args: args} }

func (t *text) Error() string { return t.In(nil) }

// In formats the message in loc's words (nil: English).
func (t *text) In(loc *i18n.Localizer) string {
	args := make([]any, len(t.args))
	copy(args, t.args)
	for i := 1; i < len(args); i += 2 {
		if err, ok := args[i].(error); ok {
			args[i] = inWords(err, loc)
		}
	}
	return loc.T(t.key, args...)
}

// Unwrap returns the errors among the arguments, so errors.Is and errors.As reach a wrapped cause.
func (t *text) Unwrap() []error {
	var out []error
	for i := 1; i < len(t.args); i += 2 {
		if err, ok := t.args[i].(error); ok {
			out = append(out, err)
		}
	}
	return out
}

// inWords is err as the user reads it in loc: a text (under any hint.Error, or wrapped by an error that
// prints it whole, as fmt.Errorf's %w does) in loc's words, anything else its own Error().
func inWords(err error, loc *i18n.Localizer) string {
	for {
		var he *hint.Error
		if errors.As(err, &he) && he == err {
			err = he.Err
			continue
		}
		break
	}
	if t, ok := err.(*text); ok {
		return t.In(loc)
	}
	// A text under a wrapper ("pair list: %w"): the wrapper's words stay, the text's are put into loc's.
	var t *text
	if errors.As(err, &t) {
		s, en := err.Error(), t.Error()
		if i := strings.LastIndex(s, en); i >= 0 {
			return sentinelsIn(err, s[:i], loc) + t.In(loc) + s[i+len(en):]
		}
	}
	return sentinelsIn(err, err.Error(), loc)
}

// sentinelWords are the errors of other packages the CLI prints to people, each with the catalogue key of its
// words: the sentinel's message without its package prefix ("unknown property"), which the English entry
// repeats exactly, so that the English output stays what scripts and tests read.
var sentinelWords = []struct {
	err error
	key string
}{
	{config.ErrUnknownProp, "cli-err-config-unknown-property"},
	{config.ErrInvalidValue, "cli-err-config-invalid-value"},
	{config.ErrInvalidPath, "cli-err-config-invalid-path"},
	{config.ErrNotEditable, "cli-err-config-not-editable"},
	{config.ErrNoMapSection, "cli-err-config-no-map-section"},
	{config.ErrInvalidKey, "cli-err-config-invalid-key"},
	{config.ErrOldSchema, "cli-err-config-old-schema"},
	{config.ErrDrifted, "cli-err-config-drifted"},
	{backup.ErrInvalidArchive, "cli-err-backup-invalid-archive"},
	{backup.ErrDaemonRunning, "cli-err-backup-daemon-running"},
	{backup.ErrNotEmpty, "cli-err-backup-not-empty"},
	{backup.ErrNoRoom, "cli-err-backup-no-room"},
}

// sentinelPrefixes are the package prefixes sentinelWords' messages start with, left as they are.
var sentinelPrefixes = []string{"config: ", "backup: "}

// sentinelWord is a sentinel's message without its package prefix.
func sentinelWord(err error) string {
	s := err.Error()
	for _, p := range sentinelPrefixes {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// sentinelsIn puts the words of the sentinels err wraps (see sentinelWords) into loc's in msg, err's
// message or a part of it: the first place each one's English is, the rest (a file name, the detail another
// package wrote) as it was. English (or nil) leaves msg alone.
func sentinelsIn(err error, msg string, loc *i18n.Localizer) string {
	if loc.Code() == i18n.Source {
		return msg
	}
	for _, sw := range sentinelWords {
		if !errors.Is(err, sw.err) {
			continue
		}
		en := sentinelWord(sw.err)
		if i := strings.Index(msg, en); i >= 0 {
			msg = msg[:i] + loc.T(sw.key) + msg[i+len(en):]
		}
	}
	return msg
}

// hinted returns err with the catalogue message key as its hint, printed in the CLI's locale.
func hinted(err error, key string, args ...any) *hint.Error {
	t := say(key, args...)
	return &hint.Error{Err: err, Hint: t.In(nil), Localize: func(code string) string { return t.In(i18n.Builtin().For(code)) }}
}

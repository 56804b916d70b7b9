package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// checkConfig reports the config's problems as a daemon's start sees them (lenient load: broken entries are
// disabled, the rest runs) and the encrypted values the key cannot open. It returns the config as a daemon
// would run it, secrets left encrypted, or nil when none loads.
func checkConfig(r *report, o Options) *config.Config {
	path := o.Layout.ConfigPath()
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		r.warn(CategoryConfig, "config-missing", path, r.t("doctor-config-missing", "path", path), r.t("doctor-config-missing-fix"))
		return nil
	}
	if err != nil {
		r.fail(CategoryConfig, "config-unreadable", path, r.t("doctor-config-unreadable", "path", path, "error", err), "chmod 600 "+path)
		return nil
	}
	checkEncrypted(r, o.Layout, raw)

	box := secrets.New(o.Layout.SecretKeyPath())
	warnings, linesIn, problems, err := config.Check(path, raw, o.Environ, box)
	switch {
	case err != nil && (errors.Is(err, secrets.ErrNoKey) || errors.Is(err, secrets.ErrDecrypt) || errors.Is(err, secrets.ErrKeyFile)):
		// Reported field by field by checkEncrypted.
	case err != nil:
		r.fail(CategoryConfig, "config-invalid", path, err.Error(), r.t("doctor-config-invalid-fix", "path", path))
		return nil
	}
	for _, p := range problems {
		r.warn(CategoryConfig, "config-entry-disabled", linesIn, r.t("doctor-config-entry-disabled", "problem", p),
			r.t("doctor-config-entry-disabled-fix", "file", linesIn, "property", p.Path))
	}
	for _, w := range warnings {
		r.warn(CategoryConfig, "config-warning", path, w, r.t("doctor-config-warning-fix", "path", path))
	}
	if len(problems) == 0 && len(warnings) == 0 && err == nil {
		r.ok(CategoryConfig, "config-ok", r.t("doctor-config-ok", "path", path))
	}
	m, err := config.OpenLenient(path, nil, o.Environ, nil)
	if err != nil {
		if len(problems) > 0 {
			// Not every problem disables only its entry (a bad storage.backend, no agent left): then the
			// daemon does not start at all.
			r.fail(CategoryConfig, "config-invalid", path, err.Error(), r.t("doctor-config-invalid-fix", "path", path))
		}
		return nil
	}
	return m.Current()
}

// checkEncrypted finds every enc2:/enc: value in the file and tries the key on it. Only errors are reported:
// a decrypted value never leaves this function.
func checkEncrypted(r *report, l install.Layout, raw []byte) {
	var doc map[string]any
	if toml.Unmarshal(raw, &doc) != nil {
		return // the config check reports the syntax error
	}
	var fields []string
	values := map[string]string{}
	walkStrings(doc, "", func(path, v string) {
		if secrets.IsEncrypted(v) {
			fields = append(fields, path)
			values[path] = v
		}
	})
	if len(fields) == 0 {
		return
	}
	sort.Strings(fields)
	keyPath := l.SecretKeyPath()
	box := secrets.New(keyPath)
	var undecryptable []string
	for _, f := range fields {
		_, err := box.Decrypt(values[f])
		switch {
		case err == nil:
		case errors.Is(err, secrets.ErrNoKey):
			r.fail(CategorySecrets, "key-missing", keyPath,
				r.t("doctor-key-missing", "count", len(fields), "fields", strings.Join(fields, ", "), "path", keyPath),
				r.t("doctor-key-missing-fix", "field", fields[0]))
			return
		case errors.Is(err, secrets.ErrKeyFile):
			r.fail(CategorySecrets, "key-invalid", keyPath, err.Error(), r.t("doctor-key-invalid-fix", "path", keyPath))
			return
		default:
			undecryptable = append(undecryptable, f)
		}
	}
	if len(undecryptable) > 0 {
		r.fail(CategorySecrets, "key-wrong", keyPath,
			r.t("doctor-key-wrong", "path", keyPath, "fields", strings.Join(undecryptable, ", ")),
			r.t("doctor-key-wrong-fix", "field", undecryptable[0]))
		return
	}
	r.ok(CategorySecrets, "secrets-ok", r.t("doctor-secrets-ok", "count", len(fields), "path", keyPath))
}

// walkStrings calls f for every string in a decoded TOML document, with its dotted path (map keys containing
// a dot are quoted, as property paths write them).
func walkStrings(v any, path string, f func(path, v string)) {
	switch t := v.(type) {
	case string:
		f(path, t)
	case map[string]any:
		for k, c := range t {
			seg := k
			if strings.ContainsAny(k, ". ") {
				seg = `"` + k + `"`
			}
			if path != "" {
				seg = path + "." + seg
			}
			walkStrings(c, seg, f)
		}
	case []any:
		for i, c := range t {
			walkStrings(c, fmt.Sprintf("%s[%d]", path, i), f)
		}
	}
}

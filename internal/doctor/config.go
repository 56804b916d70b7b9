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
		r.warn(CategoryConfig, "config-missing", path, "there is no "+path,
			"start the daemon once (zeroclaw daemon): it writes a default config with the offline echo provider")
		return nil
	}
	if err != nil {
		r.fail(CategoryConfig, "config-unreadable", path, fmt.Sprintf("%s cannot be read: %v", path, err), "chmod 600 "+path)
		return nil
	}
	checkEncrypted(r, o.Layout, raw)

	box := secrets.New(o.Layout.SecretKeyPath())
	warnings, linesIn, problems, err := config.Check(path, raw, o.Environ, box)
	switch {
	case err != nil && (errors.Is(err, secrets.ErrNoKey) || errors.Is(err, secrets.ErrDecrypt) || errors.Is(err, secrets.ErrKeyFile)):
		// Reported field by field by checkEncrypted.
	case err != nil:
		r.fail(CategoryConfig, "config-invalid", path, err.Error(),
			"fix the place named above in "+path+", then check with: zeroclaw config validate")
		return nil
	}
	for _, p := range problems {
		r.warn(CategoryConfig, "config-entry-disabled", linesIn, fmt.Sprintf("%s: the entry is disabled at start", p),
			"edit "+linesIn+" (or zeroclaw config set/delete "+p.Path+"), then: zeroclaw config validate")
	}
	for _, w := range warnings {
		r.warn(CategoryConfig, "config-warning", path, w, "edit "+path+" as the warning says; zeroclaw config validate lists what remains")
	}
	if len(problems) == 0 && len(warnings) == 0 && err == nil {
		r.ok(CategoryConfig, "config-ok", path+" loads without problems")
	}
	m, err := config.OpenLenient(path, nil, o.Environ, nil)
	if err != nil {
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
				fmt.Sprintf("%d encrypted values (%s) but %s does not exist: they cannot be read", len(fields), strings.Join(fields, ", "), keyPath),
				"restore the .secret_key that encrypted them from a backup (zeroclaw restore), or set each value again: zeroclaw config set "+fields[0]+" VALUE")
			return
		case errors.Is(err, secrets.ErrKeyFile):
			r.fail(CategorySecrets, "key-invalid", keyPath, err.Error(), "restore "+keyPath+" from a backup: 64 hex characters, a regular file, mode 0600")
			return
		default:
			undecryptable = append(undecryptable, f)
		}
	}
	if len(undecryptable) > 0 {
		r.fail(CategorySecrets, "key-wrong", keyPath,
			fmt.Sprintf("%s cannot decrypt %s: the key is not the one they were encrypted with, or the values are damaged", keyPath, strings.Join(undecryptable, ", ")),
			"restore the matching .secret_key from a backup, or set each value again: zeroclaw config set "+undecryptable[0]+" VALUE")
		return
	}
	r.ok(CategorySecrets, "secrets-ok", fmt.Sprintf("%d encrypted values open with %s", len(fields), keyPath))
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

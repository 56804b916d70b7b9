package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/client"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// configSynopsis is config's help: its command line, then its commands and how they reach the file, in loc's
// words (completion reads the English "Commands:" list).
func configSynopsis(loc *i18n.Localizer) string {
	return "<command> [--config-dir DIR] [args]\n\n" + loc.T("cli-config-help")
}

func runConfig(ctx context.Context, env Env, args []string) error {
	return group{name: "config", synopsis: configSynopsis(env.Locale()), hint: "--help", subs: []subcommand{
		sub("get", configGet), sub("set", configSet), sub("set-many", configSetMany), sub("list", configList),
		sub("delete", configDelete), sub("validate", configValidate), sub("path", configPath),
		sub("reload", configReload), sub("migrate", configMigrate),
	}}.run(ctx, env, args)
}

// configFlags parses the flags shared by every subcommand plus the caller's, with positionals allowed before,
// between and after flags; it enforces min..max positionals (max < 0: unbounded).
func configFlags(env Env, sub, synopsis string, args []string, minArgs, maxArgs int, extra func(*flag.FlagSet)) (string, []string, error) {
	fs := newFlagSet(env, "config "+sub, synopsis)
	configDir := configDirFlag(fs)
	if extra != nil {
		extra(fs)
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return "", nil, err
	}
	if len(pos) < minArgs || (maxArgs >= 0 && len(pos) > maxArgs) {
		if len(pos) < minArgs {
			fmt.Fprintf(fs.Output(), "config %s: missing argument\n", sub)
		} else {
			fmt.Fprintf(fs.Output(), "config %s: unexpected argument %q\n", sub, pos[maxArgs])
		}
		fs.Usage()
		return "", nil, errUsage
	}
	return *configDir, pos, nil
}

// parseInterspersed parses flags wherever they appear among the positionals. "--" ends the flags, and an
// argument that parses as a number (a negative value such as -1) is a positional, not a flag.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	helpFirst(fs, args)
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || isNumber(a) {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, errUsage
	}
	return pos, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// parseValue applies the CLI's value rule: JSON when the text parses as a JSON value (null excepted),
// otherwise the text itself as a JSON string.
func parseValue(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t != "" && t != "null" && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(s)
	return b
}

func configGet(ctx context.Context, env Env, args []string) error {
	dir, pos, err := configFlags(env, "get", "[--config-dir DIR] [PROP]", args, 0, 1, nil)
	if err != nil {
		return err
	}
	prop := ""
	if len(pos) == 1 {
		prop = pos[0]
	}
	return withConfig(ctx, env, dir, func(b configBackend) error {
		v, err := b.get(ctx, prop)
		if err != nil {
			return suggestProp(ctx, b, prop, configError("get", err))
		}
		return printValue(env.Stdout, v)
	})
}

func configSet(ctx context.Context, env Env, args []string) error {
	dir, pos, err := configFlags(env, "set", "[--config-dir DIR] PROP VALUE", args, 2, 2, nil)
	if err != nil {
		return err
	}
	return withConfig(ctx, env, dir, func(b configBackend) error {
		prop, err := b.set(ctx, pos[0], parseValue(pos[1]))
		if err != nil {
			return suggestProp(ctx, b, pos[0], configError("set", err))
		}
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-config-set-done", "prop", prop))
		return nil
	})
}

func configSetMany(ctx context.Context, env Env, args []string) error {
	dir, pos, err := configFlags(env, "set-many", "[--config-dir DIR] PROP=VALUE...", args, 1, -1, nil)
	if err != nil {
		return err
	}
	sets := make([]config.SetEntry, len(pos))
	for i, a := range pos {
		prop, val, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(prop) == "" {
			return hint.With(say("cli-config-not-prop-value", "index", i, "argument", fmt.Sprintf("%q", a)),
				"zeroclaw config set-many users.example.uid=1001 'users.example.permission_profiles=[\"operator\"]'")
		}
		sets[i] = config.SetEntry{Prop: prop, Value: parseValue(val)}
	}
	return withConfig(ctx, env, dir, func(b configBackend) error {
		props, err := b.setMany(ctx, sets)
		if err != nil {
			return configError("set-many", err)
		}
		for _, p := range props {
			fmt.Fprintln(env.Stdout, env.Locale().T("cli-config-set-done", "prop", p))
		}
		return nil
	})
}

func configList(ctx context.Context, env Env, args []string) error {
	dir, pos, err := configFlags(env, "list", "[--config-dir DIR] [PREFIX]", args, 0, 1, nil)
	if err != nil {
		return err
	}
	prefix := ""
	if len(pos) == 1 {
		prefix = pos[0]
	}
	return withConfig(ctx, env, dir, func(b configBackend) error {
		entries, err := b.list(ctx, prefix)
		if err != nil {
			return configError("list", err)
		}
		if len(entries) == 0 {
			fmt.Fprintln(env.Stderr, env.Locale().T("cli-config-no-properties", "prefix", fmt.Sprintf("%q", prefix)))
		}
		for _, e := range entries {
			fmt.Fprintln(env.Stdout, formatEntry(e))
		}
		return nil
	})
}

// formatEntry renders one list line: "prop = value", "  # default" when the value is the default.
func formatEntry(e api.ConfigEntry) string {
	if e.Secret { // a secret's value never leaves the config package
		if e.Populated {
			return e.Prop + " = " + jsonText(secrets.Masked)
		}
		return e.Prop + ` = ""  # default`
	}
	val := jsonText(e.Value)
	line := e.Prop + " = " + val
	isDefault := (e.Default == nil && e.Value == nil) || (e.Default != nil && jsonText(e.Default) == val)
	switch {
	case isDefault && e.Note != "":
		line += "  # default (" + e.Note + ")"
	case isDefault:
		line += "  # default"
	}
	return line
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func configDelete(ctx context.Context, env Env, args []string) error {
	dir, pos, err := configFlags(env, "delete", "[--config-dir DIR] PROP", args, 1, 1, nil)
	if err != nil {
		return err
	}
	return withConfig(ctx, env, dir, func(b configBackend) error {
		deleted, err := b.delete(ctx, pos[0])
		if err != nil && strings.Contains(err.Error(), "is a table; delete its keys") {
			// A whole entry of a map section (agents.bob, cost.prices."gpt-4o"): delete the entry.
			if path, perr := config.ParsePath(pos[0]); perr == nil && len(path) > 1 {
				if d, merr := b.deleteMapKey(ctx, path[:len(path)-1].String(), path[len(path)-1]); merr == nil {
					deleted, err = d, nil
				}
			}
		}
		if err != nil {
			return suggestProp(ctx, b, pos[0], configError("delete", err))
		}
		if deleted {
			fmt.Fprintln(env.Stdout, env.Locale().T("cli-config-deleted", "prop", pos[0]))
		} else {
			fmt.Fprintln(env.Stdout, env.Locale().T("cli-config-nothing-to-delete", "property", pos[0]))
		}
		return nil
	})
}

func configPath(_ context.Context, env Env, args []string) error {
	dir, _, err := configFlags(env, "path", "[--config-dir DIR]", args, 0, 0, nil)
	if err != nil {
		return err
	}
	layout, err := install.Resolve(dir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, layout.ConfigPath())
	return nil
}

func configReload(ctx context.Context, env Env, args []string) error {
	dir, _, err := configFlags(env, "reload", "[--config-dir DIR]", args, 0, 0, nil)
	if err != nil {
		return err
	}
	endpoint, err := endpointFor(env, dir)
	if err != nil {
		return err
	}
	c, err := connect(ctx, endpoint, nil)
	if err != nil {
		if errors.Is(err, errNoDaemon) {
			return hint.With(say("cli-config-reload-no-daemon", "error", errNoDaemon, "endpoint", endpoint), "zeroclaw daemon")
		}
		return err
	}
	defer c.Close()
	var res api.ConfigReloadResult
	if err := c.Call(ctx, api.MethodConfigReload, nil, &res); err != nil {
		return configError("reload", err)
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-config-reloaded", "generation", res.Generation))
	return nil
}

// configValidate loads and validates a file on its own (ZEROCLAW_ overrides are not applied: the file is what
// is checked). Secrets are decrypted when the install's key exists, so a wrong key is reported too.
func configValidate(_ context.Context, env Env, args []string) error {
	var file string
	dir, _, err := configFlags(env, "validate", "[--config-dir DIR] [--file F]", args, 0, 0, func(fs *flag.FlagSet) {
		fs.StringVar(&file, "file", "", "file to validate (default: the install's config.toml)")
	})
	if err != nil {
		return err
	}
	layout, err := install.Resolve(dir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	explicit := file != ""
	if !explicit {
		file = layout.ConfigPath()
	}
	var box *secrets.Box
	if b := secrets.New(layout.SecretKeyPath()); b.KeyExists() {
		box = b
	}
	raw, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		// A fresh install: the first start (or the first config edit) writes the embedded default, so that is
		// what gets checked.
		if _, _, err := config.LoadBytes(file, config.DefaultTOML(), nil, nil); err != nil {
			return say("cli-config-default-invalid", "error", err)
		}
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-config-validate-not-yet", "path", file))
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return hinted(say("cli-config-validate-missing", "path", file), "cli-config-validate-missing-hint")
	case err != nil:
		return fmt.Errorf("config: validate: %w", err)
	}
	warnings, linesIn, problems, err := config.Check(file, raw, nil, box)
	for _, w := range warnings {
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-config-warning", "warning", w))
	}
	var fe *config.FileError
	switch {
	case errors.As(err, &fe):
		fmt.Fprintf(env.Stdout, "%s:%d:%d: %s: %s\n", fe.File, fe.Line, fe.Column, keyOrDocument(fe.Key), fe.Msg)
		return hinted(say("cli-config-invalid", "path", file), "cli-config-fix-line-hint")
	case err != nil:
		return fmt.Errorf("config: validate: %w", err)
	case len(problems) == 0:
		fmt.Fprintf(env.Stdout, "%s: ok\n", file)
		return nil
	}
	for _, p := range problems {
		fmt.Fprintf(env.Stdout, "%s:%d: %s: %s\n", linesIn, p.Line, p.Path, p.Message)
	}
	return hinted(say("cli-config-problems", "path", file, "count", len(problems)), "cli-config-fix-lines-hint")
}

func keyOrDocument(key string) string {
	if key == "" {
		return "(document)"
	}
	return key
}

// printValue prints a get result: a string bare, anything else as indented JSON.
func printValue(w io.Writer, v json.RawMessage) error {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		fmt.Fprintln(w, s)
		return nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, v, "", "  "); err != nil {
		return fmt.Errorf("config: get: unexpected value: %w", err)
	}
	fmt.Fprintln(w, buf.String())
	return nil
}

// configError turns a failure from either backend into a message for the user, with a hint where one helps.
func configError(op string, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		msg := we.Message
		var d struct {
			Index *int   `json:"index"`
			Prop  string `json:"prop"`
		}
		if client.ErrorData(err, &d) && d.Index != nil && !strings.Contains(msg, "sets[") {
			msg = fmt.Sprintf("sets[%d] %s: %s", *d.Index, d.Prop, msg)
		}
		e := fmt.Errorf("config: %s: %s", op, strings.TrimPrefix(msg, "config: "))
		switch {
		case we.Code == api.CodeForbidden:
			return hinted(e, "cli-forbidden-hint")
		case strings.Contains(msg, "zeroclaw config migrate"):
			return hint.With(e, "zeroclaw config migrate")
		case strings.Contains(msg, sentinelText(config.ErrUnknownProp)):
			return hint.With(e, "zeroclaw config list")
		case strings.Contains(msg, sentinelText(config.ErrInvalidConfig)) || strings.Contains(msg, "problem(s)"):
			return hint.With(e, "zeroclaw config validate")
		}
		return e
	}
	var he *hint.Error
	if errors.As(err, &he) {
		return err
	}
	e := &opError{op: op, err: err}
	var fe *config.FileError
	var ve *config.ValidationError
	switch {
	case errors.Is(err, config.ErrOldSchema):
		return hint.With(e, "zeroclaw config migrate")
	case errors.Is(err, config.ErrUnknownProp):
		return hint.With(e, "zeroclaw config list")
	case errors.As(err, &fe):
		return hinted(e, "cli-config-fix-at-hint", "file", fe.File, "line", fe.Line, "key", keyOrDocument(fe.Key))
	case errors.As(err, &ve) && len(ve.Problems) > 0 && (op == "set" || op == "set-many" || op == "delete"):
		// A refused write changed nothing: the line named is the one the write would have made, so there is
		// nothing to fix in the file.
		return hinted(e, "cli-config-refused-write-hint", "file", ve.File, "property", ve.Problems[0].Path)
	case errors.As(err, &ve) && len(ve.Problems) > 0:
		p := ve.Problems[0]
		return hinted(e, "cli-config-fix-at-hint", "file", ve.File, "line", p.Line, "key", p.Path)
	}
	return e
}

// suggestProp adds a did-you-mean to an unknown-property error: the listed property closest to prop, by its
// last part among the properties of the same parent first (agents.default.risk_profle → risk_profile), else
// by the whole path.
func suggestProp(ctx context.Context, b configBackend, prop string, err error) error {
	var he *hint.Error
	if !errors.As(err, &he) || he.Hint != "zeroclaw config list" || prop == "" {
		return err
	}
	entries, lerr := b.list(ctx, "")
	if lerr != nil {
		return err
	}
	parent, leaf := "", prop
	if i := strings.LastIndexByte(prop, '.'); i >= 0 {
		parent, leaf = prop[:i], prop[i+1:]
	}
	var siblings, all []string
	for _, e := range entries {
		all = append(all, e.Prop)
		if p, l, ok := cutLast(e.Prop); ok && p == parent {
			siblings = append(siblings, l)
		}
	}
	if s := suggest(leaf, siblings); s != "" {
		he.Hint = fmt.Sprintf("did you mean %s? (zeroclaw config list %s shows them all)", parent+"."+s, parent)
	} else if s := suggestPath(prop, all); s != "" {
		he.Hint = fmt.Sprintf("did you mean %s? (zeroclaw config list shows them all)", s)
	}
	return err
}

// suggestPath is suggest over dotted paths, part by part: a candidate with as many parts, each one a typo of
// the part of prop (or equal to it); the fewest edits win.
func suggestPath(prop string, candidates []string) string {
	want := strings.Split(prop, ".")
	best, bestD := "", -1
	for _, c := range candidates {
		parts := strings.Split(c, ".")
		if len(parts) != len(want) {
			continue
		}
		d := 0
		for i, p := range parts {
			if p == want[i] {
				continue
			}
			if suggest(want[i], []string{p}) == "" {
				d = -1
				break
			}
			d += editDistance(want[i], p)
		}
		if d > 0 && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

func cutLast(prop string) (parent, leaf string, ok bool) {
	i := strings.LastIndexByte(prop, '.')
	if i < 0 {
		return "", "", false
	}
	return prop[:i], prop[i+1:], true
}

// sentinelText is a config sentinel's message without its package prefix, which an entry error's message drops.
func sentinelText(err error) string { return strings.TrimPrefix(err.Error(), "config: ") }

// configBackend is the config surface a subcommand uses: the running daemon over RPC, or the file directly.
type configBackend interface {
	get(ctx context.Context, prop string) (json.RawMessage, error)
	set(ctx context.Context, prop string, value json.RawMessage) (string, error)
	setMany(ctx context.Context, sets []config.SetEntry) ([]string, error)
	list(ctx context.Context, prefix string) ([]api.ConfigEntry, error)
	delete(ctx context.Context, prop string) (bool, error)
	deleteMapKey(ctx context.Context, path, key string) (bool, error)
}

// withConfig runs fn against the running daemon when one answers at the install's endpoint; otherwise, and only
// then, against the file itself with the daemon's code path (config.Manager) under the install lock, so a
// daemon that starts meanwhile is refused until fn returns.
func withConfig(ctx context.Context, env Env, configDir string, fn func(configBackend) error) error {
	layout, err := install.Resolve(configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	c, err := connect(ctx, layout.Endpoint(env.Getenv), nil)
	if err == nil {
		defer c.Close()
		return fn(rpcBackend{c})
	}
	if !errors.Is(err, errNoDaemon) {
		return err
	}
	lock, err := install.LockInstall(layout)
	if err != nil {
		var le *install.LockedError
		if errors.As(err, &le) {
			return hinted(say("cli-config-daemon-silent", "pid", le.PID, "root", layout.Root), "cli-quickstart-daemon-silent-hint")
		}
		return fmt.Errorf("config: %w", err)
	}
	defer lock.Release()
	// Like the daemon at start: a save killed between its temp file and the rename leaves the temp behind.
	if _, err := config.RemoveStaleTemps(layout.ConfigPath()); err != nil {
		return err
	}
	if _, err := config.EnsureDefault(layout.ConfigPath()); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := config.Open(layout.ConfigPath(), secrets.New(layout.SecretKeyPath()), env.Environ, log)
	if err != nil {
		return configError("open", err)
	}
	m.LocalErrors() // the user owns the file: its errors may say where it is
	return fn(localBackend{m})
}

type rpcBackend struct{ c *client.Conn }

func (b rpcBackend) get(ctx context.Context, prop string) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := b.c.Call(ctx, api.MethodConfigGet, api.ConfigGetParams{Prop: prop}, &raw); err != nil {
		return nil, err
	}
	if prop == "" {
		return raw, nil
	}
	res := api.ConfigGetResult{Value: new(json.RawMessage)}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("config/get: unexpected result: %w", err)
	}
	return *res.Value.(*json.RawMessage), nil
}

func (b rpcBackend) set(ctx context.Context, prop string, value json.RawMessage) (string, error) {
	var res api.ConfigSetResult
	if err := b.c.Call(ctx, api.MethodConfigSet, api.ConfigSetParams{Prop: prop, Value: value}, &res); err != nil {
		return "", err
	}
	if !res.Set {
		return "", say("cli-config-set-unconfirmed", "property", prop)
	}
	return res.Prop, nil
}

func (b rpcBackend) setMany(ctx context.Context, sets []config.SetEntry) ([]string, error) {
	params := api.ConfigSetManyParams{Sets: make([]api.ConfigSetParams, len(sets))}
	for i, e := range sets {
		params.Sets[i] = api.ConfigSetParams{Prop: e.Prop, Value: e.Value}
	}
	var res api.ConfigSetManyResult
	if err := b.c.Call(ctx, api.MethodConfigSetMany, params, &res); err != nil {
		return nil, err
	}
	if !res.Set {
		return nil, say("cli-config-set-many-unconfirmed")
	}
	return res.Props, nil
}

func (b rpcBackend) list(ctx context.Context, prefix string) ([]api.ConfigEntry, error) {
	var res api.ConfigListResult
	if err := b.c.Call(ctx, api.MethodConfigList, api.ConfigListParams{Prefix: prefix}, &res); err != nil {
		return nil, err
	}
	return res.Entries, nil
}

func (b rpcBackend) delete(ctx context.Context, prop string) (bool, error) {
	var res api.ConfigDeleteResult
	if err := b.c.Call(ctx, api.MethodConfigDelete, api.ConfigDeleteParams{Prop: prop}, &res); err != nil {
		return false, err
	}
	return res.Deleted, nil
}

func (b rpcBackend) deleteMapKey(ctx context.Context, path, key string) (bool, error) {
	var res api.ConfigMapKeyDeleteResult
	if err := b.c.Call(ctx, api.MethodConfigMapKeyDelete, api.ConfigMapKeyParams{Path: path, Key: key}, &res); err != nil {
		return false, err
	}
	return res.Deleted, nil
}

// localBackend edits the file through config.Manager; the local user owns the file, so every path is allowed.
type localBackend struct{ m *config.Manager }

func allowAll([]string) error { return nil }

func (b localBackend) get(_ context.Context, prop string) (json.RawMessage, error) {
	v, err := b.m.Get(prop)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("config: encode %s: %w", prop, err)
	}
	return out, nil
}

func (b localBackend) set(ctx context.Context, prop string, value json.RawMessage) (string, error) {
	return b.m.Set(ctx, prop, value, allowAll)
}

func (b localBackend) setMany(ctx context.Context, sets []config.SetEntry) ([]string, error) {
	return b.m.SetMany(ctx, sets, allowAll)
}

func (b localBackend) list(_ context.Context, prefix string) ([]api.ConfigEntry, error) {
	return b.m.List(prefix), nil
}

func (b localBackend) delete(ctx context.Context, prop string) (bool, error) {
	return b.m.Delete(ctx, prop, allowAll)
}

func (b localBackend) deleteMapKey(ctx context.Context, path, key string) (bool, error) {
	return b.m.DeleteMapKey(ctx, path, key, allowAll)
}

// opError names the subcommand that failed without repeating the "config: " prefix of the domain error.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string {
	return "config: " + e.op + ": " + strings.TrimPrefix(e.err.Error(), "config: ")
}

func (e *opError) Unwrap() error { return e.err }

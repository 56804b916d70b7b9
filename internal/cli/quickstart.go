package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/quickstart"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// Bounds of the provider test: the answer text, and the bytes of any HTTP body the provider sends back.
const (
	qsTestMaxText = 4 << 10
	qsTestMaxBody = 1 << 20
)

// qsAnswers are the answers of one quickstart run, from flags or prompts.
type qsAnswers struct {
	provider, uri, model, keyEnv, alias, agent, preset, memory string
	pair, service                                              bool
}

// qsDefaults are each family's model and key variable.
var qsDefaults = map[string]struct{ model, keyEnv string }{
	config.FamilyOpenAI:    {"gpt-4o-mini", "OPENAI_API_KEY"},
	config.FamilyAnthropic: {"claude-sonnet-4-20250514", "ANTHROPIC_API_KEY"},
	config.FamilyOllama:    {"llama3.2", ""},
	config.FamilyEcho:      {"echo", ""},
}

// errQSCancelled is the end of the input at a question: the quickstart stops and writes nothing.
var errQSCancelled = errors.New("quickstart cancelled")

func runQuickstart(ctx context.Context, env Env, args []string) error {
	loc := env.Locale()
	fs := newFlagSet(env, "quickstart", loc.T("cli-quickstart-synopsis"))
	configDir := configDirFlag(fs)
	var a qsAnswers
	fs.StringVar(&a.provider, "provider", "", "model provider: openai (or OpenAI-compatible with --uri), ollama, anthropic or echo")
	fs.StringVar(&a.provider, "model-provider", "", "the same as --provider (upstream's name)")
	apiKeyFlag := fs.String("api-key", "", "the API key itself (upstream's flag; it shows in ps: prefer --api-key-env)")
	fs.StringVar(&a.uri, "uri", "", "base URL of the provider's API (default: the provider's own)")
	fs.StringVar(&a.model, "model", "", "model name")
	fs.StringVar(&a.keyEnv, "api-key-env", "", "environment variable holding the API key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY)")
	fs.StringVar(&a.alias, "provider-alias", "", "alias of the new provider entry (default: the first free of default, quickstart, quickstart_2...)")
	fs.StringVar(&a.agent, "agent", "", "name of the new agent")
	fs.StringVar(&a.preset, "preset", "", "risk preset: strict, balanced or open")
	fs.StringVar(&a.memory, "memory", "sqlite", "the agent's memory: sqlite, markdown or none")
	fs.BoolVar(&a.pair, "pair", false, "show a pairing code for a device afterwards (needs a running daemon)")
	fs.BoolVar(&a.service, "install-service", false, "install the daemon as a user service afterwards")
	yes := fs.Bool("yes", false, "take the default of every question not answered by a flag, and write without asking")
	dryRun := fs.Bool("dry-run", false, "show the change to config.toml and write nothing")
	noTest := fs.Bool("no-test", false, "skip the provider's test request")
	testSecs := fs.Int("test-timeout", 30, "seconds the provider's test request may take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(fs.Output(), loc.T("cli-quickstart-unexpected-argument", "argument", fmt.Sprintf("%q", fs.Arg(0))))
		return errUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	set["provider"] = set["provider"] || set["model-provider"]
	if set["api-key"] {
		set["api-key-env"], a.keyEnv = true, ""
	}
	p := &prompter{in: bufio.NewReader(env.Stdin), out: env.Stdout, yes: *yes, loc: loc}
	if err := a.complete(p, set, env); err != nil {
		if errors.Is(err, errQSCancelled) {
			fmt.Fprintln(env.Stdout, loc.T("cli-quickstart-cancelled"))
			return nil
		}
		return err
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	apiKey := *apiKeyFlag
	if a.keyEnv != "" {
		apiKey = env.Getenv(a.keyEnv)
	}
	if !*noTest {
		if err := qsTest(ctx, env, a, apiKey, *testSecs); err != nil {
			return hint.With(errors.New(loc.T("cli-quickstart-provider-failed", "error", err.Error())),
				loc.T("cli-quickstart-provider-failed-hint"))
		}
	}
	return qsWrite(ctx, env, layout, a, apiKey, p, *dryRun, *yes, *configDir)
}

// complete asks for every answer no flag gave, in order, and checks each.
func (a *qsAnswers) complete(p *prompter, set map[string]bool, env Env) error {
	var err error
	if !set["provider"] {
		if a.provider, err = p.ask(p.loc.T("cli-quickstart-ask-provider"), config.FamilyEcho); err != nil {
			return err
		}
	}
	a.provider = strings.ToLower(strings.TrimSpace(a.provider))
	d, ok := qsDefaults[a.provider]
	if !ok {
		return hint.With(errors.New(p.loc.T("cli-quickstart-unknown-provider", "provider", fmt.Sprintf("%q", a.provider))),
			p.loc.T("cli-quickstart-unknown-provider-hint"))
	}
	if !set["uri"] && (a.provider == config.FamilyOpenAI || a.provider == config.FamilyOllama) {
		def := provider.DefaultOpenAIURI
		if a.provider == config.FamilyOllama {
			def = provider.DefaultOllamaURI
		}
		if a.uri, err = p.ask(p.loc.T("cli-quickstart-ask-uri"), def); err != nil {
			return err
		}
		if a.uri == def {
			a.uri = "" // the family's default: nothing to write
		}
	}
	if !set["model"] {
		if a.model, err = p.ask(p.loc.T("cli-quickstart-ask-model"), d.model); err != nil {
			return err
		}
	}
	if a.keyEnv == "" && d.keyEnv != "" {
		def := d.keyEnv
		if a.uri != "" && env.Getenv(def) == "" {
			def = "" // a local OpenAI-compatible server usually needs no key
		}
		if !set["api-key-env"] {
			if a.keyEnv, err = p.ask(p.loc.T("cli-quickstart-ask-key-env"), def); err != nil {
				return err
			}
		}
	}
	if a.keyEnv != "" && env.Getenv(a.keyEnv) == "" {
		return hint.With(errors.New(p.loc.T("cli-quickstart-no-key", "variable", a.keyEnv)), "export "+a.keyEnv+"=...")
	}
	for tries := 0; ; tries++ {
		if !set["agent"] {
			if a.agent, err = p.ask(p.loc.T("cli-quickstart-ask-agent"), "assistant"); err != nil {
				return err
			}
		}
		if err = config.CheckAlias(a.agent); err == nil {
			break
		}
		msg := p.loc.T("cli-quickstart-bad-agent-name", "name", fmt.Sprintf("%q", a.agent))
		if set["agent"] || p.yes || tries == 2 {
			return hint.With(errors.New(msg), "--agent my_agent")
		}
		fmt.Fprintln(p.out, p.loc.T("cli-quickstart-bad-agent-name-again", "message", msg, "example", "my_agent"))
	}
	if !set["preset"] {
		if a.preset, err = p.ask(p.loc.T("cli-quickstart-ask-preset"), "balanced"); err != nil {
			return err
		}
	}
	if quickstart.RiskPresetName(a.preset) == "" {
		return hint.With(errors.New(p.loc.T("cli-quickstart-unknown-preset", "preset", fmt.Sprintf("%q", a.preset))),
			p.loc.T("cli-quickstart-unknown-preset-hint"))
	}
	if !set["pair"] {
		if a.pair, err = p.confirm(p.loc.T("cli-quickstart-ask-pair"), false); err != nil {
			return err
		}
	}
	if !set["install-service"] {
		if a.service, err = p.confirm(p.loc.T("cli-quickstart-ask-service"), false); err != nil {
			return err
		}
	}
	return nil
}

// prompter asks questions on out and reads the answers line by line from in (a terminal or a pipe), in loc's
// language (nil: English).
type prompter struct {
	in  *bufio.Reader
	out io.Writer
	yes bool // take every default without asking
	loc *i18n.Localizer
}

// ask returns the answer, def when it is empty; the end of the input is errQSCancelled.
func (p *prompter) ask(question, def string) (string, error) {
	if p.yes {
		return def, nil
	}
	if def != "" {
		fmt.Fprintf(p.out, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(p.out, "%s: ", question)
	}
	line, err := readLine(p.in, qsMaxAnswer)
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		fmt.Fprintln(p.out)
		return "", errQSCancelled
	}
	if s := strings.TrimSpace(line); s != "" {
		return s, nil
	}
	return def, nil
}

// qsMaxAnswer bounds one answer; the rest of a longer line is read and dropped, never held.
const qsMaxAnswer = 4096

// readLine reads one line, keeping at most max bytes of it.
func readLine(r *bufio.Reader, max int) (string, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if room := max - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return string(line), err
		}
	}
}

// confirm asks a yes/no question. y and yes always answer yes, and so do the locale's own words
// (cli-quickstart-yes-words: o and oui in French).
func (p *prompter) confirm(question string, def bool) (bool, error) {
	d := p.loc.T("cli-quickstart-default-no")
	if def {
		d = p.loc.T("cli-quickstart-default-yes")
	}
	ans, err := p.ask(question+" ("+d+")", "")
	if err != nil {
		return false, err
	}
	ans = strings.ToLower(ans)
	if ans == "" {
		return def, nil
	}
	words := append([]string{"y", "yes"}, strings.Split(p.loc.T("cli-quickstart-yes-words"), ",")...)
	return slices.ContainsFunc(words, func(w string) bool { return strings.TrimSpace(strings.ToLower(w)) == ans }), nil
}

// qsTest sends the provider one small request; every byte it may send back is bounded.
func qsTest(ctx context.Context, env Env, a qsAnswers, apiKey string, secs int) error {
	if secs <= 0 {
		secs = 30
	}
	loc := env.Locale()
	fmt.Fprintln(env.Stdout, loc.T("cli-quickstart-testing", "provider", a.provider))
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second)
	defer cancel()
	pr, err := provider.New(provider.Settings{Family: a.provider, Alias: "quickstart", URI: a.uri, APIKey: apiKey,
		Model: a.model, TimeoutSecs: secs, MaxRetries: -1, MaxTokens: 64,
		Client: &http.Client{Transport: cappedTransport{max: qsTestMaxBody, tooLarge: errors.New(loc.T("cli-quickstart-answer-too-large"))}}})
	if err != nil {
		return err
	}
	res, err := pr.Stream(ctx, provider.Request{
		Messages: []provider.Message{{Role: provider.RoleUser, Content: "Reply with the single word OK."}},
		Limits:   provider.Limits{MaxTextBytes: qsTestMaxText},
	}, nil)
	if err != nil {
		return err
	}
	answer := strings.Join(strings.Fields(res.Text), " ")
	if len(answer) > 80 {
		answer = answer[:80] + "…"
	}
	fmt.Fprintln(env.Stdout, loc.T("cli-quickstart-test-ok", "answer", fmt.Sprintf("%q", answer)))
	return nil
}

// cappedTransport fails a response body with tooLarge once it passes max bytes, so a provider cannot make the
// test hold more.
type cappedTransport struct {
	max      int64
	tooLarge error
}

func (t cappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: t.max, tooLarge: t.tooLarge}
	return resp, nil
}

type cappedBody struct {
	rc       io.ReadCloser
	left     int64
	tooLarge error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, b.tooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// submission is the builder submission of the answers; alias is the provider entry's.
func (a qsAnswers) submission(alias, apiKey string) *api.BuilderSubmission {
	fields := map[string]string{}
	if a.uri != "" {
		fields["uri"] = a.uri
	}
	if apiKey != "" {
		fields["api_key"] = apiKey
	}
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	runtime := quickstart.DefaultRuntimeProfile
	return &api.BuilderSubmission{
		ModelProvider: api.Selector{Mode: api.SelectFresh, Value: raw(api.QuickstartModelProvider{
			ProviderType: a.provider, Alias: alias, Model: a.model, Fields: fields})},
		RiskProfile:    api.Selector{Mode: api.SelectFresh, Value: raw(quickstart.RiskPresetName(a.preset))},
		RuntimeProfile: api.Selector{Mode: api.SelectFresh, Value: raw(runtime)},
		Memory:         api.Selector{Mode: api.SelectFresh, Value: raw(a.memory)},
		Channels:       []api.Selector{},
		Agent:          api.QuickstartAgent{Name: a.agent},
	}
}

// freeAlias is the provider alias to create: the one asked for, else the first free of default, quickstart,
// quickstart_2...
func freeAlias(cfg *config.Config, family, asked string) string {
	if asked != "" {
		return asked
	}
	taken := cfg.Providers.Models[family]
	for i := 1; ; i++ {
		alias := "default"
		switch {
		case i == 2:
			alias = "quickstart"
		case i > 2:
			alias = fmt.Sprintf("quickstart_%d", i-1)
		}
		if _, ok := taken[alias]; !ok {
			return alias
		}
	}
}

// sameProvider is the configured provider the answers describe exactly (family, model, uri and key), reused
// rather than duplicated; "" when there is none or an alias was asked for.
func sameProvider(cfg *config.Config, a qsAnswers, apiKey string) string {
	if a.alias != "" {
		return ""
	}
	for _, alias := range slices.Sorted(maps.Keys(cfg.Providers.Models[a.provider])) {
		pc := cfg.Providers.Models[a.provider][alias]
		if pc.Model == a.model && pc.URI == a.uri && pc.APIKey == apiKey {
			return a.provider + "." + alias
		}
	}
	return ""
}

// qsWrite previews the change, shows it, asks, and writes it: through the running daemon when one answers,
// else to the file under the install lock.
func qsWrite(ctx context.Context, env Env, layout install.Layout, a qsAnswers, apiKey string, p *prompter, dryRun, yes bool, configDir string) error {
	loc := env.Locale()
	path := layout.ConfigPath()
	c, err := connect(ctx, layout.Endpoint(env.Getenv), nil)
	daemon := err == nil
	switch {
	case daemon:
		defer c.Close()
	case !errors.Is(err, errNoDaemon):
		return err
	case !dryRun:
		lock, err := install.LockInstall(layout)
		if err != nil {
			var le *install.LockedError
			if errors.As(err, &le) {
				return hint.With(errors.New(loc.T("cli-quickstart-daemon-silent", "pid", le.PID, "root", layout.Root)),
					loc.T("cli-quickstart-daemon-silent-hint"))
			}
			return fmt.Errorf("quickstart: %w", err)
		}
		defer lock.Release()
		if _, err := config.RemoveStaleTemps(path); err != nil {
			return err
		}
	}
	var box *secrets.Box
	if !dryRun {
		box = secrets.New(layout.SecretKeyPath())
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if dryRun {
			// Nothing may be written: preview against the default file in a scratch directory.
			dir, err := os.MkdirTemp("", "zeroclaw-quickstart-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			path = filepath.Join(dir, "config.toml")
		}
		if _, err := config.EnsureDefault(path); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	m, err := config.Open(path, box, env.Environ, log)
	if err != nil {
		return configError("open", err)
	}
	m.LocalErrors()
	sub := a.submission(freeAlias(m.Current(), a.provider, a.alias), apiKey)
	if ref := sameProvider(m.Current(), a, apiKey); ref != "" {
		sub.ModelProvider = api.Selector{Mode: api.SelectExisting, Value: json.RawMessage(fmt.Sprintf("%q", ref))}
	}
	b := &quickstart.Builder{Config: m, Locale: loc}
	plan, pv, err := b.Preview(ctx, sub)
	if err != nil {
		return err
	}
	if len(plan.Errors) > 0 {
		return qsProblems(env, plan.Errors)
	}
	if !pv.Changed() {
		fmt.Fprintln(env.Stdout, loc.T("cli-quickstart-no-change"))
		return nil
	}
	fmt.Fprintf(env.Stdout, "--- %s\n+++ %s\n", layout.ConfigPath(), loc.T("cli-quickstart-diff-after", "path", layout.ConfigPath()))
	writeDiff(env.Stdout, pv.Before, pv.After, 2)
	if dryRun {
		fmt.Fprintln(env.Stdout, loc.T("cli-quickstart-dry-run"))
		return nil
	}
	if !yes {
		ok, err := p.confirm(loc.T("cli-quickstart-ask-confirm", "path", layout.ConfigPath()), false)
		if err != nil || !ok {
			fmt.Fprintln(env.Stdout, loc.T("cli-quickstart-cancelled"))
			return nil
		}
	}
	var res api.QuickstartResult
	if daemon {
		err = c.Call(ctx, api.MethodQuickstartApply, api.QuickstartSubmissionParams{Submission: sub}, &res)
	} else {
		res, err = b.Apply(ctx, sub, pv.Before, nil)
	}
	if err != nil {
		return hint.With(errors.New(loc.T("cli-quickstart-apply-failed", "error", err.Error())), "zeroclaw quickstart --dry-run")
	}
	if res.Kind != api.QuickstartKindApplied || res.Agent == nil {
		return qsProblems(env, res.Errors)
	}
	fmt.Fprintln(env.Stdout, loc.T("cli-quickstart-written", "agent", fmt.Sprintf("%q", res.Agent.Alias),
		"provider", res.Agent.ModelProvider, "risk", res.Agent.RiskProfile, "path", layout.ConfigPath(),
		"backup", layout.ConfigPath()+".bak"))
	if daemon {
		fmt.Fprintln(env.Stdout, loc.T("cli-quickstart-via-daemon"))
	}
	fmt.Fprintln(env.Stdout, loc.T("cli-quickstart-next-steps", "command", `zeroclaw agent --agent `+res.Agent.Alias+` -m "hello"`))
	return qsAfter(ctx, env, a, daemon, configDir)
}

// qsAfter runs the optional steps: a pairing code, the user service.
func qsAfter(ctx context.Context, env Env, a qsAnswers, daemon bool, configDir string) error {
	dirArgs := []string{}
	if configDir != "" {
		dirArgs = []string{"--config-dir", configDir}
	}
	if a.pair {
		if daemon {
			if err := runPair(ctx, env, append([]string{"code"}, dirArgs...)); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(env.Stdout, env.Locale().T("cli-quickstart-pair-later"))
		}
	}
	if a.service {
		return runService(ctx, env, append([]string{"install"}, dirArgs...))
	}
	return nil
}

func qsProblems(env Env, errs []api.QuickstartError) error {
	for _, e := range errs {
		field := ""
		if e.Field != "" {
			field = " (" + e.Field + ")"
		}
		fmt.Fprintf(env.Stderr, "  %s%s: %s\n", e.Step, field, e.Message)
	}
	return hint.With(errors.New(env.Locale().T("cli-quickstart-cannot-apply")), "zeroclaw quickstart --help")
}

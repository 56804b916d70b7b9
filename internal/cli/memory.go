package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

const memorySynopsis = "list [--agent A] [--category C] [--session S] [--json] | search QUERY [--agent A] [--limit N] [--json] | get KEY [--agent A] [--json] | forget KEY [--agent A]"

func runMemory(ctx context.Context, env Env, args []string) error {
	return group{name: "memory", synopsis: memorySynopsis, subs: []subcommand{
		sub("list", memoryList), sub("search", memorySearch), sub("get", memoryGet), sub("forget", memoryForget),
	}}.run(ctx, env, args)
}

func memoryList(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "memory list", "[--config-dir DIR] [--agent A] [--category C] [--session S] [--json]")
	configDir := configDirFlag(fs)
	agent := fs.String("agent", "", "only this agent's memories (and those it may read)")
	category := fs.String("category", "", "only this category (core, daily, conversation or a custom name)")
	sessionID := fs.String("session", "", "only memories of this session key")
	asJSON := fs.Bool("json", false, "print the entries as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var res api.MemoryEntriesResult
	if err := callOnce(ctx, env, *configDir, connectOrSpawn, api.MethodMemoryList, api.MemoryListParams{Agent: *agent, Category: *category, SessionID: *sessionID}, &res); err != nil {
		return callError("memory list", err, nil)
	}
	return printEntries(env, res, *asJSON)
}

func memorySearch(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "memory search", "QUERY [--config-dir DIR] [--agent A] [--limit N] [--json]")
	configDir := configDirFlag(fs)
	agent := fs.String("agent", "", "search this agent's memories (and those it may read)")
	limit := fs.Int("limit", 10, "at most this many results")
	asJSON := fs.Bool("json", false, "print the entries as JSON")
	query, err := parseWithID(fs, args, "query")
	if err != nil {
		return err
	}
	var res api.MemoryEntriesResult
	if err := callOnce(ctx, env, *configDir, connectOrSpawn, api.MethodMemorySearch, api.MemorySearchParams{Query: query, Agent: *agent, Limit: *limit}, &res); err != nil {
		return callError("memory search", err, nil)
	}
	return printEntries(env, res, *asJSON)
}

func memoryGet(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "memory get", "KEY [--config-dir DIR] [--agent A] [--json]")
	configDir := configDirFlag(fs)
	agent := fs.String("agent", "", "this agent's memory (else any agent's)")
	asJSON := fs.Bool("json", false, "print the entry as JSON")
	key, err := parseWithID(fs, args, "key")
	if err != nil {
		return err
	}
	var res api.MemoryGetResult
	if err := callOnce(ctx, env, *configDir, connectOrSpawn, api.MethodMemoryGet, api.MemoryGetParams{Key: key, Agent: *agent}, &res); err != nil {
		return callError("memory get", err, memoryHints)
	}
	if *asJSON {
		return printJSON(env, res.Entry)
	}
	e := res.Entry
	printLabelled(env.Stdout, env.Locale(), "", 1, memoryLabels, []labelled{{"cli-memory-key", visible.Escape(e.Key)},
		{"cli-memory-category", visible.Escape(e.Category)}, {"cli-memory-agent", visible.Escape(deref(e.AgentAlias))},
		{"cli-memory-created", e.Timestamp}})
	fmt.Fprintf(env.Stdout, "\n%s\n", visible.Escape(e.Content))
	return nil
}

func memoryForget(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "memory forget", "KEY [--config-dir DIR] [--agent A]")
	configDir := configDirFlag(fs)
	agent := fs.String("agent", "", "forget only this agent's memory (else the key of every agent)")
	key, err := parseWithID(fs, args, "key")
	if err != nil {
		return err
	}
	var res api.MemoryDeleteResult
	if err := callOnce(ctx, env, *configDir, connectOrSpawn, api.MethodMemoryDelete, api.MemoryDeleteParams{Key: key, Agent: *agent}, &res); err != nil {
		return callError("memory forget", err, memoryHints)
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-memory-forgot", "key", visible.Escape(key)))
	return nil
}

// memoryHints answer a key that is not there.
var memoryHints = map[int]string{api.CodeNotFound: "cli-memory-key-hint"}

func printEntries(env Env, res api.MemoryEntriesResult, asJSON bool) error {
	if asJSON {
		return printJSON(env, res.Entries)
	}
	if res.Count == 0 {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-memory-none"))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tCATEGORY\tAGENT\tSCORE\tCONTENT")
	for _, e := range res.Entries {
		score := "-"
		if e.Score != nil {
			score = fmt.Sprintf("%.0f%%", *e.Score*100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", visible.Escape(e.Key), visible.Escape(e.Category), visible.Escape(deref(e.AgentAlias)),
			score, visible.Escape(e.Content))
	}
	return tw.Flush()
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// memoryLabels are the labels of memory get's record (see printLabelled).
var memoryLabels = []string{"cli-memory-key", "cli-memory-category", "cli-memory-agent", "cli-memory-created"}

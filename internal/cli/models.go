package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// runModels lists what providers offer: zeroclaw models [PROVIDER] asks the daemon (config/catalog-models with
// live), which asks the provider with the key it holds (the CLI never sees it). Without PROVIDER every
// configured <family>.<alias> is asked; one that fails is reported and the others are still listed.
func runModels(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "models", "[--config-dir DIR] [--json] [PROVIDER (<family>.<alias>)]")
	asJSON := fs.Bool("json", false, "print the config/catalog-models results as JSON")
	helpFirst(fs.FlagSet, args)
	var ref string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		ref, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if rest := fs.Args(); ref == "" && len(rest) == 1 {
		ref = rest[0]
	} else if len(rest) > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", rest[len(rest)-1])
		fs.Usage()
		return errUsage
	}
	c, err := connectOrSpawn(ctx, env, *fs.configDir)
	if err != nil {
		return err
	}
	defer c.Close()
	refs := []string{ref}
	if ref == "" {
		var list api.ConfigListResult
		if err := c.Call(ctx, api.MethodConfigList, api.ConfigListParams{Prefix: "providers.models"}, &list); err != nil {
			return err
		}
		refs = nil
		for _, e := range list.Entries {
			parts := strings.SplitN(e.Path, ".", 5)
			if len(parts) >= 4 && parts[0] == "providers" && parts[1] == "models" {
				if r := parts[2] + "." + parts[3]; !slices.Contains(refs, r) {
					refs = append(refs, r)
				}
			}
		}
		slices.Sort(refs)
	}
	var results []api.CatalogModelsResult
	var failed []string
	for _, r := range refs {
		var res api.CatalogModelsResult
		if err := c.Call(ctx, api.MethodConfigCatalogModels, api.CatalogModelsParams{ModelProvider: r, Live: true}, &res); err != nil {
			if ref != "" {
				return err
			}
			fmt.Fprintf(env.Stderr, "%s: %s\n", visible.Escape(r), shownLines(err.Error()))
			failed = append(failed, r)
			continue
		}
		results = append(results, res)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(results, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
	} else {
		t := newTable(env, env.Stdout, "PROVIDER", "MODEL")
		for _, res := range results {
			for _, m := range res.Models {
				t.Row(visible.Escape(res.ModelProvider), visible.Escape(m))
			}
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return say("cli-models-failed", "providers", strings.Join(failed, ", "))
	}
	return nil
}

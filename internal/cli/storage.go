package cli

import "context"

func runStorage(ctx context.Context, env Env, args []string) error {
	return group{name: "storage", synopsis: "compact [--store NAME] [--config-dir DIR]",
		subs: []subcommand{sub("compact", storageCompact)}}.run(ctx, env, args)
}

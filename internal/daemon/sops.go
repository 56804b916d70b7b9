package daemon

import (
	"log/slog"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
)

// sopLibrary is the SOP authoring domain of an install: the directory [sop] sops_dir names (or
// <install>/shared/sops), read on every call. After a save, create or delete it reloads the runtime's
// definitions at once when the runtime runs (rt returns nil otherwise), so an edit takes effect for new runs
// without waiting for the directory watch; a running run keeps the revision it started with.
func sopLibrary(cfg func() *config.Config, root, home string, rt func() *sopRuntime, log *slog.Logger) *sop.Library {
	// A save or create that a crash cut short is finished (or dropped) now, under the install lock.
	if err := sop.Recover(sop.ResolveDir(root, cfg().SOP.SOPsDir, home)); err != nil {
		log.Warn("SOP: recovering interrupted saves", "component", "sop", "err", err)
	}
	return &sop.Library{
		Dir: func() string { return sop.ResolveDir(root, cfg().SOP.SOPsDir, home) },
		Options: func() sop.LoadOptions {
			return sop.LoadOptions{DefaultMode: sop.ParseExecutionMode(cfg().SOP.DefaultExecutionMode)}
		},
		Changed: func(string) {
			if r := rt(); r != nil {
				r.Reload(cfg().SOP)
			}
		},
	}
}

package daemon

import (
	"encoding/json"
	"log/slog"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
)

// sopLibrary is the SOP authoring domain of an install: the directory [sop] sops_dir names (or
// <install>/shared/sops), read on every call. After a save, create or delete it reloads the engine's
// definitions, when an engine runs (engine() returns nil otherwise), so an edit takes effect for new runs.
func sopLibrary(cfg func() *config.Config, root, home string, engine func() *engine.Engine, log *slog.Logger) *sop.Library {
	lib := &sop.Library{
		Dir:     func() string { return sop.ResolveDir(root, cfg().SOP.SOPsDir, home) },
		Options: func() sop.LoadOptions { return sopLoadOptions(cfg()) },
	}
	lib.Changed = func(string) {
		if e := engine(); e != nil {
			e.Reload(engineDefs(lib.List(), log))
		}
	}
	return lib
}

func sopLoadOptions(c *config.Config) sop.LoadOptions {
	return sop.LoadOptions{DefaultMode: sop.ParseExecutionMode(c.SOP.DefaultExecutionMode)}
}

// engineDefs hands the loaded SOPs to the engine in the wire form it takes (upstream's Sop JSON). The SOPs
// that did not load are logged once here, each with its reason.
func engineDefs(c *sop.Catalog, log *slog.Logger) []engine.Def {
	for _, d := range c.Disabled {
		log.Warn("SOP disabled", "component", "sop", "dir", d.Dir, "reason", d.Reason)
	}
	defs := make([]engine.Def, 0, len(c.Sops))
	for _, s := range c.Sops {
		b, err := json.Marshal(s)
		if err != nil {
			log.Warn("SOP disabled", "component", "sop", "dir", s.Location, "reason", err.Error())
			continue
		}
		var d engine.Def
		if err := json.Unmarshal(b, &d); err != nil {
			log.Warn("SOP disabled", "component", "sop", "dir", s.Location, "reason", err.Error())
			continue
		}
		defs = append(defs, d)
	}
	return defs
}

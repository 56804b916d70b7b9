package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
)

// def is one loaded SOP as the engine keeps it: a private copy (a run holds the one it started with, persisted
// with it, so a reload never changes a running run) and its content revision.
type def struct {
	sop.Sop
	rev string
}

func newDef(s sop.Sop) *def {
	b, _ := json.Marshal(s)
	var c sop.Sop
	if json.Unmarshal(b, &c) != nil {
		c = s
	}
	h := sha256.Sum256(b)
	return &def{Sop: c, rev: hex.EncodeToString(h[:8])}
}

func (d *def) maxConcurrent() int { return int(d.MaxConcurrent) }

func (d *def) mode(defaultMode string) string {
	if d.Deterministic {
		return string(sop.ModeDeterministic)
	}
	if d.ExecutionMode == "" {
		return defaultMode
	}
	return string(d.ExecutionMode)
}

func (d *def) step(n int) *sop.Step {
	for i := range d.Steps {
		if int(d.Steps[i].Number) == n {
			return &d.Steps[i]
		}
	}
	return nil
}

func (d *def) first() int {
	if len(d.Steps) == 0 {
		return 0
	}
	return int(d.Steps[0].Number)
}

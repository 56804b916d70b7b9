package logs

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkRolling compares upstream's cut-after-every-write once over the cap (slack 0) with letting the file
// grow to twice the cap before cutting it back (the default): both show the same newest max entries.
func BenchmarkRolling(b *testing.B) {
	for _, max := range []int{200, 10000} {
		for _, slack := range []string{"upstream", "amortized"} {
			b.Run(fmt.Sprintf("max=%d/%s", max, slack), func(b *testing.B) {
				p := Persistence{Mode: ModeRolling, MaxEntries: max}
				o := Options{Path: filepath.Join(b.TempDir(), "runtime-trace.jsonl"), Persistence: func() Persistence { return p }}
				if slack == "upstream" {
					o.rollSlack = func(int) int { return 0 }
				}
				h := NewHub(o)
				defer h.Close()
				e := Entry{Category: CategoryTool, Action: "invoke", Outcome: OutcomeSuccess, Message: "tool call finished",
					Zeroclaw: map[string]any{"agent_alias": "default", "tool": "shell"}}
				for range max { // start at the cap, the steady state
					h.Publish(e)
				}
				b.ResetTimer()
				for range b.N {
					h.Publish(e)
				}
			})
		}
	}
}

package cost

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Summary is upstream's CostSummary, plus by_day (ours) for reports.
type Summary struct {
	SessionCostUSD float64                `json:"session_cost_usd"`
	DailyCostUSD   float64                `json:"daily_cost_usd"`
	MonthlyCostUSD float64                `json:"monthly_cost_usd"`
	TotalTokens    int64                  `json:"total_tokens"`
	RequestCount   int                    `json:"request_count"`
	ByModel        map[string]*ModelStats `json:"by_model"`
	ByAgent        map[string]*AgentStats `json:"by_agent"`
	ByDay          map[string]*DayStats   `json:"by_day"`
	// UnpricedModels are the models of the selection recorded without a price (at $0, outside the budgets),
	// sorted (ours): what needs a cost.prices entry.
	UnpricedModels []string `json:"unpriced_models"`
}

// ModelStats is upstream's per-model line.
type ModelStats struct {
	Model             string  `json:"model"`
	CostUSD           float64 `json:"cost_usd"`
	InputTokens       int64   `json:"input_tokens"`
	CachedInputTokens int64   `json:"cached_input_tokens"`
	OutputTokens      int64   `json:"output_tokens"`
	TotalTokens       int64   `json:"total_tokens"`
	RequestCount      int     `json:"request_count"`
}

// AgentStats is upstream's per-agent line.
type AgentStats struct {
	AgentAlias        string  `json:"agent_alias"`
	CostUSD           float64 `json:"cost_usd"`
	TotalTokens       int64   `json:"total_tokens"`
	InputTokens       int64   `json:"input_tokens"`
	OutputTokens      int64   `json:"output_tokens"`
	CachedInputTokens int64   `json:"cached_input_tokens"`
	RequestCount      int     `json:"request_count"`
}

// DayStats is one UTC day (ours).
type DayStats struct {
	Day          string  `json:"day"`
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	TotalTokens  int64   `json:"total_tokens"`
	RequestCount int     `json:"request_count"`
}

// Query is cost/query: agent selects that agent's records (the window does not apply, as upstream); otherwise
// from/to ([from, to), either may be zero) bound the records. Daily and monthly totals are the current UTC day
// and month within the selection; session is this process's spending without bounds, the sum of the selected
// records with them.
func (t *Tracker) Query(agent string, from, to time.Time) (Summary, error) {
	now := t.o.Clock.Now().UTC()
	day, month := now.Format("2006-01-02"), now.Format("2006-01")
	s := Summary{ByModel: map[string]*ModelStats{}, ByAgent: map[string]*AgentStats{}, ByDay: map[string]*DayStats{},
		UnpricedModels: []string{}}
	bounded := agent == "" && (!from.IsZero() || !to.IsZero())
	err := readLedger(t.o.Ledger.Path(), func(r store.CostRecord, at time.Time) {
		if agent != "" && r.AgentAlias != agent {
			return
		}
		if agent == "" && (!from.IsZero() && at.Before(from) || !to.IsZero() && !at.Before(to)) {
			return
		}
		u := r.Usage
		s.RequestCount++
		s.TotalTokens += int64(u.TotalTokens)
		if bounded || agent != "" {
			s.SessionCostUSD += u.CostUSD
		}
		if at.Format("2006-01") == month {
			s.MonthlyCostUSD += u.CostUSD
			if at.Format("2006-01-02") == day {
				s.DailyCostUSD += u.CostUSD
			}
		}
		m := s.ByModel[u.Model]
		if m == nil {
			m = &ModelStats{Model: u.Model}
			s.ByModel[u.Model] = m
		}
		m.CostUSD += u.CostUSD
		m.InputTokens += int64(u.InputTokens)
		m.CachedInputTokens += int64(u.CachedInputTokens)
		m.OutputTokens += int64(u.OutputTokens)
		m.TotalTokens += int64(u.TotalTokens)
		m.RequestCount++
		if r.AgentAlias != "" {
			a := s.ByAgent[r.AgentAlias]
			if a == nil {
				a = &AgentStats{AgentAlias: r.AgentAlias}
				s.ByAgent[r.AgentAlias] = a
			}
			a.CostUSD += u.CostUSD
			a.TotalTokens += int64(u.TotalTokens)
			a.InputTokens += int64(u.InputTokens)
			a.OutputTokens += int64(u.OutputTokens)
			a.CachedInputTokens += int64(u.CachedInputTokens)
			a.RequestCount++
		}
		d := at.Format("2006-01-02")
		ds := s.ByDay[d]
		if ds == nil {
			ds = &DayStats{Day: d}
			s.ByDay[d] = ds
		}
		ds.CostUSD += u.CostUSD
		ds.InputTokens += int64(u.InputTokens)
		ds.OutputTokens += int64(u.OutputTokens)
		ds.TotalTokens += int64(u.TotalTokens)
		ds.RequestCount++
		if u.PricingAvailable != nil && !*u.PricingAvailable && !slices.Contains(s.UnpricedModels, u.Model) {
			s.UnpricedModels = append(s.UnpricedModels, u.Model)
		}
	})
	slices.Sort(s.UnpricedModels)
	if err != nil {
		return Summary{}, err
	}
	if !bounded && agent == "" {
		t.mu.Lock()
		s.SessionCostUSD = t.session
		t.mu.Unlock()
	}
	return s, nil
}

// Org returns <data>/org_cost.json as it is, or nil when there is none (upstream's cost/org).
func Org(path string) (json.RawMessage, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cost: failed to read org_cost.json: %w", err)
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("cost: org_cost.json is not valid JSON")
	}
	return raw, nil
}

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

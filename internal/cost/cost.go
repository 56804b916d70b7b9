// Package cost prices provider requests, appends them to the cost ledger (data/state/costs.jsonl), enforces the
// daily and monthly budgets of [cost] before every provider call, and answers cost/query (upstream's
// CostSummary).
package cost

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// ErrBudgetExceeded refuses a provider call once the day's or month's spending is over its limit.
var ErrBudgetExceeded = errors.New("Budget exceeded")

// Usage is one provider request's token counts.
type Usage struct {
	// Provider is the "<family>.<alias>" that served the request; empty: the agent's model_provider.
	Provider          string
	Model             string
	InputTokens       int
	OutputTokens      int
	CachedInputTokens int
}

// Options configure a Tracker. Ledger and Config are required.
type Options struct {
	Ledger *store.CostLedger
	Config func() *config.Config
	Clock  clock.Clock
	NewID  func() string
	Logs   logs.Publisher // budget warnings, refusals and unpriced models; nil discards
	// Recorded, if set, is told every recorded request (metrics); it must not block.
	Recorded func(model string, inputTokens, outputTokens int64, usd float64)
}

// Tracker records costs and checks budgets. It is safe for concurrent use.
type Tracker struct {
	o       Options
	started time.Time

	mu       sync.Mutex // mu guards the fields below
	loaded   bool
	day      string          // UTC day the daily total is for
	month    string          // UTC month the monthly total is for
	daily    float64         // spent on day
	monthly  float64         // spent in month
	session  float64         // spent by this process
	warned   map[string]bool // "day:<day>" / "month:<month>": the warning was published
	unpriced map[string]bool // models already reported without a price
}

// NewTracker returns a tracker; the ledger is read on first use.
func NewTracker(o Options) *Tracker {
	o.Clock = clock.OrReal(o.Clock)
	if o.Logs == nil {
		o.Logs = logs.Discard
	}
	return &Tracker{o: o, started: o.Clock.Now(), warned: map[string]bool{}, unpriced: map[string]bool{}}
}

// Price returns the cost of u under the prices of cfg (the provider's pricing, else cost.prices, else the built-in
// list prices, see config.Config.PriceFor) and whether the model has a price. Upstream's formula:
// cached input at the cached rate (the input rate when none), the rest of the input at the input rate, output
// at the output rate; a negative or non-finite rate counts as 0.
func Price(cfg *config.Config, u Usage) (float64, bool) {
	p, ok := cfg.PriceFor(u.Provider, u.Model)
	if !ok {
		return 0, false
	}
	rate := func(r float64) float64 {
		if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
			return 0
		}
		return r
	}
	in, out, cached := rate(p.InputPerMillion), rate(p.OutputPerMillion), rate(p.CachedInputPerMillion)
	if p.CachedInputPerMillion == 0 {
		cached = in
	}
	c := min(max(u.CachedInputTokens, 0), u.InputTokens)
	return float64(u.InputTokens-c)/1e6*in + float64(c)/1e6*cached + float64(u.OutputTokens)/1e6*out, true
}

// Record prices u with the prices in force now and appends it to the ledger. With [cost] enabled = false
// nothing is recorded. The record keeps its price: a later rate change does not touch it.
func (t *Tracker) Record(ctx context.Context, sessionID, agentAlias string, u Usage) error {
	cfg := t.o.Config()
	if !cfg.Cost.Enabled {
		return nil
	}
	now := t.o.Clock.Now().UTC()
	if u.Provider == "" {
		u.Provider = cfg.Agents[agentAlias].ModelProvider
	}
	usd, priced := Price(cfg, u)
	rec := store.CostRecord{ID: t.newID(), SessionID: sessionID, AgentAlias: agentAlias, Usage: store.CostUsage{
		Model: u.Model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedInputTokens: u.CachedInputTokens,
		TotalTokens: u.InputTokens + u.OutputTokens, CostUSD: usd, Timestamp: now.Format(time.RFC3339Nano)}}
	if !priced {
		rec.Usage.PricingAvailable = new(false)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.loadLocked(now); err != nil {
		return err
	}
	if err := t.o.Ledger.Record(ctx, rec); err != nil {
		return err
	}
	t.rollLocked(now)
	if t.o.Recorded != nil {
		t.o.Recorded(u.Model, int64(u.InputTokens), int64(u.OutputTokens), usd)
	}
	t.daily += usd
	t.monthly += usd
	t.session += usd
	if !priced && !t.unpriced[u.Model] {
		t.unpriced[u.Model] = true
		t.o.Logs.Publish(logs.Entry{Severity: logs.SeverityWarn, Category: logs.CategoryProvider, Action: "note",
			Message:  fmt.Sprintf("no price configured for model %s: its usage is recorded at $0 and budgets do not count it (set cost.prices.\"%s\")", u.Model, u.Model),
			Zeroclaw: map[string]any{"model": u.Model, "agent_alias": agentAlias}})
	}
	return nil
}

func (t *Tracker) newID() string {
	if t.o.NewID != nil {
		return t.o.NewID()
	}
	return uuid4()
}

// Check runs before every provider call. Over a limit it returns an error wrapping ErrBudgetExceeded with
// upstream's message; at or past warn_at_percent of a limit it returns a warning text (once per call, for the
// caller to show) and publishes a log event the first time in the period.
func (t *Tracker) Check(agentAlias string) (warning string, err error) {
	cfg := t.o.Config()
	if !cfg.Cost.Enabled {
		return "", nil
	}
	now := t.o.Clock.Now().UTC()
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.loadLocked(now); err != nil {
		return "", err
	}
	t.rollLocked(now)
	c := cfg.Cost
	for _, p := range []struct {
		name, key  string
		spent, lim float64
	}{{"Day", "day:" + t.day, t.daily, c.DailyLimitUSD}, {"Month", "month:" + t.month, t.monthly, c.MonthlyLimitUSD}} {
		if p.lim <= 0 {
			continue
		}
		if p.spent > p.lim {
			msg := fmt.Sprintf("$%.4f of $%.2f %s limit. Cannot make further API calls until the budget resets.", p.spent, p.lim, p.name)
			t.o.Logs.Publish(logs.Entry{Severity: logs.SeverityWarn, Category: logs.CategoryAgent, Action: "skip", Outcome: logs.OutcomeFailure,
				Message: "tool-call loop budget exceeded: " + msg, Zeroclaw: map[string]any{"agent_alias": agentAlias}})
			return "", fmt.Errorf("%w: %s", ErrBudgetExceeded, msg)
		}
		if pct := c.WarnAtPercent; pct > 0 && p.spent >= p.lim*float64(pct)/100 && warning == "" {
			warning = fmt.Sprintf("Budget warning: $%.4f of $%.2f %s limit spent (%d%% or more).", p.spent, p.lim, p.name, pct)
			if !t.warned[p.key] {
				t.warned[p.key] = true
				t.o.Logs.Publish(logs.Entry{Severity: logs.SeverityWarn, Category: logs.CategoryAgent, Action: "note",
					Message: warning, Zeroclaw: map[string]any{"agent_alias": agentAlias},
					Attributes: map[string]any{"spent_usd": p.spent, "limit_usd": p.lim, "period": p.name}})
			}
		}
	}
	return warning, nil
}

// loadLocked reads the ledger once to seed the day's and month's totals.
func (t *Tracker) loadLocked(now time.Time) error {
	if t.loaded {
		return nil
	}
	t.day, t.month = now.Format("2006-01-02"), now.Format("2006-01")
	t.daily, t.monthly = 0, 0
	err := readLedger(t.o.Ledger.Path(), func(r store.CostRecord, at time.Time) {
		if at.Format("2006-01") == t.month {
			t.monthly += r.Usage.CostUSD
			if at.Format("2006-01-02") == t.day {
				t.daily += r.Usage.CostUSD
			}
		}
	})
	if err != nil {
		return err
	}
	t.loaded = true
	return nil
}

// rollLocked starts a new day or month when the clock has passed into one.
func (t *Tracker) rollLocked(now time.Time) {
	if d := now.Format("2006-01-02"); d != t.day {
		t.day, t.daily = d, 0
	}
	if m := now.Format("2006-01"); m != t.month {
		t.month, t.monthly = m, 0
	}
}

// readLedger calls fn for each well-formed record; a missing ledger is empty, a torn or foreign line skipped.
func readLedger(path string, fn func(store.CostRecord, time.Time)) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cost: read ledger: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r store.CostRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.ID == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, r.Usage.Timestamp)
		if err != nil {
			continue
		}
		fn(r, at.UTC())
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("cost: read ledger: %w", err)
	}
	return nil
}

package channel

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Deps is what a Factory may use to build an adapter.
type Deps struct {
	Logger *slog.Logger
	Clock  clock.Clock
	// HTTP is the client for platforms spoken over HTTP (nil: a plain client). Registry.New hands each adapter
	// a SameOrigin copy of it, so no adapter can send its token along a redirect to another origin.
	HTTP *http.Client
	// DataDir is where an adapter keeps state it must own (a sync token), under <data>/channels/<type>.<alias>.
	DataDir string
}

// Type is one platform: how to find its configured instances and how to build an adapter for one.
type Type struct {
	Name string
	// Instances lists the enabled entries of [channels.<Name>.*] in cfg: alias ⇒ the typed entry (it becomes
	// Instance.Settings). Entries not enabled are left out.
	Instances func(cfg *config.Config) map[string]any
	// ApprovalTimeout is the entry's approval timeout (zero: 300 s, upstream's default for most adapters).
	ApprovalTimeout func(settings any) time.Duration
	// ExcludedTools is the entry's excluded_tools.
	ExcludedTools func(settings any) []string
	// New builds an adapter for inst. It must not start anything: the core calls Run.
	New func(inst Instance, deps Deps) (Adapter, error)
}

// Registry holds the platform types by name. The zero value is empty and usable; its methods are safe for
// concurrent use.
type Registry struct {
	mu    sync.Mutex // guards types
	types map[string]Type
}

// Register adds t; registering a name twice is a programming error and panics.
func (r *Registry) Register(t Type) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.types == nil {
		r.types = map[string]Type{}
	}
	if _, dup := r.types[t.Name]; dup {
		panic(fmt.Sprintf("channel: type %s registered twice", t.Name))
	}
	r.types[t.Name] = t
}

// Lookup returns the type named name.
func (r *Registry) Lookup(name string) (Type, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.types[name]
	return t, ok
}

// New builds the adapter of inst with its type's factory, deps.HTTP made SameOrigin: every adapter the
// registry builds follows redirects only within the origin it called, whether or not it thinks of it.
func (r *Registry) New(inst Instance, deps Deps) (Adapter, error) {
	t, ok := r.Lookup(inst.ID.Type)
	if !ok {
		return nil, fmt.Errorf("channel %s: no such type: %w", inst.ID, ErrPermanent)
	}
	deps.HTTP = SameOrigin(deps.HTTP)
	return t.New(inst, deps)
}

// Names lists the registered types, sorted.
func (r *Registry) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return sortedKeys(r.types)
}

// Instances is every enabled channel of cfg whose type is registered, sorted by id, each with its owning agent
// and allow-list resolved.
func (r *Registry) Instances(cfg *config.Config, defaultAgent string) []Instance {
	var out []Instance
	for _, name := range r.Names() {
		t, _ := r.Lookup(name)
		entries := t.Instances(cfg)
		for _, alias := range sortedKeys(entries) {
			id := ID{Type: name, Alias: alias}
			inst := Instance{ID: id, Settings: entries[alias], ApprovalTimeout: 300 * time.Second}
			inst.Agent = OwnerOf(cfg, id, defaultAgent)
			inst.Peers = PeersOf(cfg, id, inst.Agent)
			if t.ApprovalTimeout != nil {
				if d := t.ApprovalTimeout(inst.Settings); d > 0 {
					inst.ApprovalTimeout = d
				}
			}
			if t.ExcludedTools != nil {
				inst.ExcludedTools = slices.Clone(t.ExcludedTools(inst.Settings))
			}
			out = append(out, inst)
		}
	}
	return out
}

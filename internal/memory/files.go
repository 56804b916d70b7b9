package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// None is the backend that remembers nothing: stores are dropped, recalls are empty.
type None struct{}

// Kind implements Backend.
func (None) Kind() string { return KindNone }

// EnsureAgent implements Backend.
func (None) EnsureAgent(_ context.Context, alias string) (string, error) { return alias, nil }

// Store implements Backend.
func (None) Store(context.Context, string, Record) error { return nil }

// Recall implements Backend.
func (None) Recall(context.Context, Query) ([]Entry, error) { return []Entry{}, nil }

// Get implements Backend.
func (None) Get(context.Context, string, []string) (*Entry, error) { return nil, nil }

// List implements Backend.
func (None) List(context.Context, Filter) ([]Entry, error) { return []Entry{}, nil }

// Forget implements Backend.
func (None) Forget(context.Context, string, string) (bool, error) { return false, nil }

// PurgeSession implements Backend.
func (None) PurgeSession(context.Context, string, string) (int, error) { return 0, nil }

// PurgeNamespace implements Backend.
func (None) PurgeNamespace(context.Context, string, string) (int, error) { return 0, nil }

// DeleteBefore implements Backend.
func (None) DeleteBefore(context.Context, string, time.Time) (int, error) { return 0, nil }

// PruneAutoSaved implements Backend.
func (None) PruneAutoSaved(context.Context, string, int, int) (int, error) { return 0, nil }

// Close implements Backend.
func (None) Close() error { return nil }

// Markdown is upstream's per-agent file backend: core memories are appended to <workspace>/MEMORY.md, the
// others to <workspace>/memory/<local date>.md, as "- **key**: content" lines. It is append-only: forget
// never deletes, and entries are keyed by file and line ("MEMORY:3").
type Markdown struct {
	dir string
	mu  sync.Mutex // serializes appends
}

// NewMarkdown returns the markdown backend of one agent workspace.
func NewMarkdown(workspace string) *Markdown { return &Markdown{dir: workspace} }

// Kind implements Backend.
func (m *Markdown) Kind() string { return KindMarkdown }

// EnsureAgent implements Backend: the files belong to one agent, whose id is its alias.
func (m *Markdown) EnsureAgent(_ context.Context, alias string) (string, error) { return alias, nil }

// Store implements Backend.
func (m *Markdown) Store(_ context.Context, _ string, r Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	date := r.Now.Local().Format("2006-01-02")
	path, header := filepath.Join(m.dir, "MEMORY.md"), "# Long-Term Memory\n\n"
	if r.Category != CategoryCore {
		path, header = filepath.Join(m.dir, "memory", date+".md"), "# Daily Log — "+date+"\n\n"
	}
	if err := os.MkdirAll(filepath.Join(m.dir, "memory"), 0o700); err != nil {
		return fmt.Errorf("memory: markdown: %w", err)
	}
	line := fmt.Sprintf("- **%s**: %s", r.Key, r.Content)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("memory: markdown: %w", err)
	}
	var text string
	if len(old) == 0 {
		text = header + line + "\n"
	} else {
		text = string(old) + "\n" + line + "\n"
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("memory: markdown: %w", err)
	}
	return nil
}

func (m *Markdown) all() ([]Entry, error) {
	var out []Entry
	read := func(path, category string) error {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		stem := strings.TrimSuffix(filepath.Base(path), ".md")
		i := 0
		for _, l := range strings.Split(string(b), "\n") {
			t := strings.TrimSpace(l)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			id := fmt.Sprintf("%s:%d", stem, i)
			out = append(out, Entry{ID: id, Key: id, Content: strings.TrimPrefix(t, "- "), Category: category,
				Timestamp: stem, Namespace: "default"})
			i++
		}
		return nil
	}
	if err := read(filepath.Join(m.dir, "MEMORY.md"), CategoryCore); err != nil {
		return nil, fmt.Errorf("memory: markdown: %w", err)
	}
	days, _ := filepath.Glob(filepath.Join(m.dir, "memory", "*.md"))
	for _, d := range days {
		if err := read(d, CategoryDaily); err != nil {
			return nil, fmt.Errorf("memory: markdown: %w", err)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Timestamp > out[j].Timestamp })
	return out, nil
}

// Recall implements Backend: the share of the query's words each line contains.
func (m *Markdown) Recall(_ context.Context, q Query) ([]Entry, error) {
	q = clipQuery(q)
	all, err := m.all()
	if err != nil {
		return nil, err
	}
	var words []string
	if !recentQuery(q.Text) {
		words = strings.Fields(strings.ToLower(q.Text))
	}
	out := []Entry{}
	for _, e := range all {
		if q.Since != "" && e.Timestamp < q.Since[:min(len(q.Since), 10)] || q.Until != "" && e.Timestamp > q.Until {
			continue
		}
		n := 0
		lc := strings.ToLower(e.Content)
		for _, w := range words {
			if strings.Contains(lc, w) {
				n++
			}
		}
		switch {
		case len(words) == 0:
			e.Score = ptr(1.0)
		case n > 0:
			e.Score = ptr(float64(n) / float64(len(words)))
		default:
			continue
		}
		out = append(out, e)
	}
	if len(words) > 0 {
		sort.SliceStable(out, func(i, j int) bool { return *out[i].Score > *out[j].Score })
	}
	return out[:min(len(out), q.Limit)], nil
}

// Get implements Backend: the first line whose key is key or whose text contains it.
func (m *Markdown) Get(_ context.Context, key string, _ []string) (*Entry, error) {
	all, err := m.all()
	if err != nil {
		return nil, err
	}
	for _, e := range all {
		if e.Key == key || strings.Contains(e.Content, key) {
			return &e, nil
		}
	}
	return nil, nil
}

// List implements Backend.
func (m *Markdown) List(_ context.Context, f Filter) ([]Entry, error) {
	all, err := m.all()
	if err != nil {
		return nil, err
	}
	out := []Entry{}
	for _, e := range all {
		if f.Category == "" || e.Category == f.Category {
			out = append(out, e)
		}
	}
	return out, nil
}

// Forget implements Backend: the files are append-only, nothing is deleted.
func (m *Markdown) Forget(context.Context, string, string) (bool, error) { return false, nil }

// PurgeSession implements Backend.
func (m *Markdown) PurgeSession(context.Context, string, string) (int, error) {
	return 0, fmt.Errorf("%w: markdown memories are append-only", ErrUnsupported)
}

// PurgeNamespace implements Backend.
func (m *Markdown) PurgeNamespace(context.Context, string, string) (int, error) {
	return 0, fmt.Errorf("%w: markdown memories are append-only", ErrUnsupported)
}

// DeleteBefore implements Backend: retention does not apply to the files.
func (m *Markdown) DeleteBefore(context.Context, string, time.Time) (int, error) { return 0, nil }

// PruneAutoSaved implements Backend: the files are append-only (upstream's), so nothing is pruned; the daily
// files already split the conversation by date.
func (m *Markdown) PruneAutoSaved(context.Context, string, int, int) (int, error) { return 0, nil }

// Close implements Backend.
func (m *Markdown) Close() error { return nil }

package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
)

// The ops of a Patch.
const (
	PatchSet     = "set"     // write Value at Prop
	PatchDelete  = "delete"  // remove Prop's key (it falls back to its default)
	PatchComment = "comment" // only write Comment above Prop's key
	PatchTest    = "test"    // Prop's running value must equal Value, or the whole patch is refused
)

// ErrTestFailed matches a patch refused because one of its test ops did not hold (JSON Patch's test).
var ErrTestFailed = errors.New("config: test failed")

// PatchEntry is one op of a Patch. Comment, when set, is written as the `# ...` lines above the key after the
// op (a set or a comment op; "" removes the comment there).
type PatchEntry struct {
	Op      string
	Prop    string
	Value   json.RawMessage
	Comment *string
}

// ErrDrifted matches a patch refused because config.toml was edited behind the daemon on a property the patch
// writes (upstream's config_changed_externally).
var ErrDrifted = errors.New("config: config.toml changed on disk")

// DriftError refuses a patch that would overwrite a hand edit not yet reloaded. It matches ErrDrifted.
type DriftError struct{ Props []string }

func (e *DriftError) Error() string {
	return fmt.Sprintf("config: config.toml changed on disk on %d property(ies) being patched: %s; reload the "+
		"config to take the file's values, or send the patch again overriding the drift to write yours",
		len(e.Props), strings.Join(e.Props, ", "))
}

// Is makes a *DriftError match ErrDrifted.
func (e *DriftError) Is(target error) bool { return target == ErrDrifted }

// WireData is the error's data on the wire: the drifted properties.
func (e *DriftError) WireData() any { return map[string]any{"props": e.Props} }

// Patch applies ops as one change, in order, on one copy of the file text: every op is checked (a test op
// against the config in force, under the write lock, so nothing changes it before the write), staged, the
// candidate validated as a whole and saved in one atomic write, then swapped in; any failure leaves the file
// byte for byte and the live config as they were. authorize gets the prop of every op (a test's too: the patch
// is its caller's write), under the config write lock, as for SetMany. With refuseDrift, a patch naming a
// property whose value on disk differs from the running one (Drift) is a *DriftError. An op's own failure is
// an *EntryError (Batch "ops") with its index; a test that does not hold wraps ErrTestFailed. It returns the
// props written (not the tested ones), in order, without repeats; a patch of tests alone writes nothing.
func (m *Manager) Patch(ctx context.Context, ops []PatchEntry, refuseDrift bool, authorize func(props []string) error) ([]string, error) {
	switch {
	case len(ops) == 0:
		return nil, fmt.Errorf("%w: config/patch needs at least one op", ErrInvalidValue)
	case len(ops) > MaxSetEntries:
		return nil, fmt.Errorf("%w: config/patch accepts at most %d ops", ErrInvalidValue, MaxSetEntries)
	}
	batch := make([]staged, len(ops))
	props := make([]string, len(ops))
	for i, op := range ops {
		r, err := m.checkOp(op)
		var val reflect.Value
		if err == nil && (op.Op == PatchSet || op.Op == PatchTest) {
			val, err = decodeValue(r, op.Value)
		}
		if err != nil {
			return nil, &EntryError{Index: i, Prop: op.Prop, Err: err, Batch: "ops"}
		}
		batch[i], props[i] = staged{r: r, val: val}, r.path.String()
	}

	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	raw, err := m.beginWrite(ctx, "patch", authorize, props)
	if err != nil {
		return nil, err
	}
	if refuseDrift {
		if err := m.refuseDrift(raw, props); err != nil {
			return nil, err
		}
	}
	live := m.Current()
	var written []string
	blamed := slices.Clone(props) // a validation failure blames the op that wrote the property, never a test
	for i, s := range batch {
		if ops[i].Op != PatchTest {
			written = append(written, props[i])
			continue
		}
		blamed[i] = ""
		// Checked against the config in force, under the write lock: nothing can change it before the write.
		if have, ok := lookup(live, s.r.path); !ok || !sameValue(have, s.val) {
			shown := any(nil)
			if ok {
				shown = view(have, false)
			}
			b, _ := json.Marshal(shown)
			return nil, &EntryError{Index: i, Prop: props[i], Batch: "ops",
				Err: fmt.Errorf("%w: %s is %s, not %s", ErrTestFailed, props[i], b, bytes.TrimSpace(ops[i].Value))}
		}
	}
	if len(written) == 0 {
		return []string{}, nil // only tests, and they held
	}
	orig, encrypt := raw, m.encryptWanted(raw)
	for i, s := range batch {
		if raw, err = m.stageOp(raw, ops[i], s, encrypt); err != nil {
			return nil, &EntryError{Index: i, Prop: props[i], Err: err, Batch: "ops"}
		}
	}
	if err := m.commit(orig, raw, blamed); err != nil {
		if ee, ok := errors.AsType[*EntryError](err); ok {
			ee.Batch = "ops"
		}
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range written {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// checkOp normalizes op's prop and checks the op is one Patch knows, on a leaf.
func (m *Manager) checkOp(op PatchEntry) (prop, error) {
	r, err := normalize(op.Prop)
	if err != nil {
		return prop{}, err
	}
	if !r.leaf {
		return prop{}, fmt.Errorf("%w: %s is a table; patch its keys", ErrInvalidValue, r.path)
	}
	switch op.Op {
	case PatchSet:
		if len(op.Value) == 0 {
			return prop{}, fmt.Errorf("%w: a set needs a value", ErrInvalidValue)
		}
	case PatchDelete:
		if op.Comment != nil {
			return prop{}, fmt.Errorf("%w: a delete removes the key, so it cannot carry a comment", ErrInvalidValue)
		}
	case PatchComment:
		if op.Comment == nil {
			return prop{}, fmt.Errorf("%w: a comment op needs a comment", ErrInvalidValue)
		}
	case PatchTest:
		switch {
		case len(op.Value) == 0:
			return prop{}, fmt.Errorf("%w: a test needs a value", ErrInvalidValue)
		case r.secret:
			return prop{}, fmt.Errorf("%w: a secret cannot be tested (its value never leaves the daemon)", ErrInvalidValue)
		case op.Comment != nil:
			return prop{}, fmt.Errorf("%w: a test writes nothing, so it cannot carry a comment", ErrInvalidValue)
		}
	default:
		return prop{}, fmt.Errorf("%w: unknown op %q (set, delete, comment, test)", ErrInvalidValue, op.Op)
	}
	return r, nil
}

// stageOp applies one op to the file text, then its comment.
func (m *Manager) stageOp(raw []byte, op PatchEntry, s staged, encrypt bool) ([]byte, error) {
	var err error
	switch op.Op {
	case PatchSet:
		raw, err = m.stage(raw, s, encrypt)
	case PatchDelete:
		var out []byte
		if out, _, err = tomledit.Delete(m.name, raw, s.r.path); err == nil {
			raw = out
			if entry := mapEntryPrefix(s.r.path); entry != nil {
				raw, err = tomledit.EnsureTable(m.name, raw, entry)
			}
		}
	}
	if err != nil || op.Comment == nil {
		return raw, err
	}
	return tomledit.Comment(m.name, raw, s.r.path, *op.Comment)
}

// refuseDrift is the *DriftError of props that drifted in raw (the file now) from the live config. A file
// that does not build has no drift to report here: the patch's own validation says what is wrong with it.
func (m *Manager) refuseDrift(raw []byte, props []string) error {
	disk, err := buildLenient(m.name, raw, m.environ, m.box)
	if err != nil {
		return nil
	}
	var hit []string
	for _, d := range driftBetween(m.live.Load().st, disk) {
		for _, p := range props {
			if d.Path == p {
				hit = append(hit, p)
				break
			}
		}
	}
	if len(hit) > 0 {
		return &DriftError{Props: hit}
	}
	return nil
}

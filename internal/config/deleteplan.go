package config

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
)

// RefSite is a property that names the entry a delete would remove (upstream's RefSiteDto): its path, the
// value it holds, and why it blocks the delete.
type RefSite struct {
	Path     string
	RawValue string
	Message  string
}

// DeletePlan is what deleting the entry key of the map-keyed section path would do (upstream's delete-plan):
// Allowed when config/map-key-delete would succeed. Blockers are the properties that would be left naming
// something that no longer exists, which fail validation, so the delete is refused until they change. Our
// delete scrubs nothing (it never edits what it was not asked to), so there are no scrubs.
type DeletePlan struct {
	Path     string
	Key      string
	Allowed  bool
	Blockers []RefSite
}

// DeletePlan dry-runs DeleteMapKey(path, key) on the file as it is now: the entry is cut from the text and the
// result validated, and every problem that the file did not already have is a blocker. Nothing is written. A
// section that is not map-keyed is ErrNoMapSection; an entry config.toml does not define is ErrUnknownProp.
func (m *Manager) DeletePlan(path, key string) (DeletePlan, error) {
	s, err := section(path)
	if err != nil {
		return DeletePlan{}, err
	}
	entry := s.entry(key)
	plan := DeletePlan{Path: path, Key: key, Blockers: []RefSite{}}
	raw, err := m.readRaw(m.name)
	if err != nil {
		return plan, err
	}
	if err := refuseOldSchema(m.name, raw); err != nil {
		return plan, err
	}
	out, found, err := tomledit.DeleteEntry(m.name, raw, entry)
	if err != nil {
		return plan, err
	}
	if !found {
		return plan, fmt.Errorf("%w: %s is not configured in %s", ErrUnknownProp, entry, m.name)
	}
	had := map[string]bool{}
	for _, p := range problemsOf(m.name, raw, m.environ) {
		had[p.Path+"\x00"+p.Message] = true
	}
	live := m.Current()
	for _, p := range problemsOf(m.name, out, m.environ) {
		if had[p.Path+"\x00"+p.Message] {
			continue
		}
		site := RefSite{Path: p.Path, Message: p.Message}
		if r, err := normalize(p.Path); err == nil {
			if v, ok := lookup(live, r.path); ok {
				site.RawValue = displayOf(view(v, r.secret))
			}
		}
		plan.Blockers = append(plan.Blockers, site)
	}
	plan.Allowed = len(plan.Blockers) == 0
	return plan, nil
}

// problemsOf is the validation problems of raw (none when it builds; a problem at the file's root when it
// does not parse). Secrets are not decrypted: no check reads them.
func problemsOf(name string, raw []byte, environ []string) []Problem {
	_, err := build(name, raw, environ, nil)
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.Problems
	}
	if err != nil {
		return []Problem{{Path: "", Message: err.Error()}}
	}
	return nil
}

// displayOf is a value as upstream displays a reference: a string as it is, anything else as JSON.
func displayOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

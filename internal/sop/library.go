package sop

import (
	"errors"
	"fmt"
	"sync"
)

// Library is the authoring domain over one install's SOPs directory (the sops/* list, get, validate, save,
// create, delete, graph methods and the gateway's /api/sops routes). It reads from disk on every call, so it
// works whether or not the runtime is on, and always sees what was last saved. Writes are serialized.
type Library struct {
	// Dir returns the SOPs directory in force (ResolveDir of the current config). Required.
	Dir func() string
	// Options returns the load options in force (default_execution_mode). nil: defaults.
	Options func() LoadOptions
	// Changed, if set, is called after a save, create or delete succeeded (the daemon reloads the engine's
	// definitions with it; a running run keeps the revision it started with). It must not block long.
	Changed func(name string)

	mu sync.Mutex // serializes writes
}

func (l *Library) opts() LoadOptions {
	if l.Options == nil {
		return LoadOptions{}
	}
	return l.Options()
}

// List loads every SOP (broken ones are in the catalog's Disabled list).
func (l *Library) List() *Catalog { return LoadDir(l.Dir(), l.opts()) }

// Get loads one SOP. Any failure is ErrInvalid with upstream's message (a missing SOP is ErrNotFound too)
// "SOP '<name>': <why>" (upstream answers sops/get's failures as invalid params).
func (l *Library) Get(name string) (Sop, error) {
	s, _, err := LoadOne(l.Dir(), name, l.opts())
	if errors.Is(err, ErrNotFound) {
		// Invalid params on the wire as upstream, and a 404 on a gateway route (the not-found row matches too).
		return Sop{}, &Error{Kinds: []error{ErrInvalid, ErrNotFound}, Msg: fmt.Sprintf("SOP '%s': not found", name)}
	}
	if err != nil {
		return Sop{}, errorf(ErrInvalid, "SOP '%s': %s", name, err.Error())
	}
	return s, nil
}

// Check lists the findings of the SOP on disk called name, each at its file and line (as `zeroclaw sop
// validate` prints them).
func (l *Library) Check(name string) []Check {
	if CheckName(name) != nil {
		return nil
	}
	return checkOne(l.Dir(), name, l.opts())
}

// Save upserts s. originalName, when set and different from s.Name, is refused: a rename is not supported
// (upstream's rule), since a run in flight names the SOP.
func (l *Library) Save(s Sop, originalName string) (Sop, error) {
	if originalName != "" && originalName != s.Name {
		return s, errorf(ErrInvalid, "rename not supported: SOP '%s' cannot be saved as '%s'", originalName, s.Name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out, err := Save(l.Dir(), s)
	if err != nil {
		return out, asInvalid(err)
	}
	l.changed(out.Name)
	return out, nil
}

// Create writes a new SOP; an existing one is ErrAlreadyExists.
func (l *Library) Create(s Sop) (Sop, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out, err := Create(l.Dir(), s)
	if err != nil {
		if errors.Is(err, ErrAlreadyExists) {
			return out, err
		}
		return out, asInvalid(err)
	}
	l.changed(out.Name)
	return out, nil
}

// Delete removes a SOP; a missing one is ErrNotFound.
func (l *Library) Delete(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := Delete(l.Dir(), name); err != nil {
		return err
	}
	l.changed(name)
	return nil
}

func (l *Library) changed(name string) {
	if l.Changed != nil {
		l.Changed(name)
	}
}

// asInvalid makes an authoring failure invalid params with its own message (upstream answers every save
// failure -32602), keeping the sentinels it already wraps.
func asInvalid(err error) error {
	if errors.Is(err, ErrInvalid) || errors.Is(err, ErrInvalidName) || errors.Is(err, ErrAlreadyExists) || errors.Is(err, ErrNotFound) {
		return err
	}
	return errorf(ErrInvalid, "%s", err.Error())
}

package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
)

// Sentinel errors of the config domain; match them with errors.Is.
var (
	// ErrInvalidConfig matches every *FileError and *ValidationError.
	ErrInvalidConfig = tomledit.ErrInvalidConfig
	// ErrUnknownProp is returned for a property path the schema does not define.
	ErrUnknownProp = errors.New("config: unknown property")
	// ErrInvalidPath is returned for a property path that does not parse.
	ErrInvalidPath = tomledit.ErrInvalidPath
	// ErrInvalidValue is returned for a value of the wrong type or shape for its property.
	ErrInvalidValue = errors.New("config: invalid value")
	// ErrNotEditable is returned for an edit the surgical editor cannot make without rewriting
	// unrelated text (keys inside inline tables or array tables, whole tables).
	ErrNotEditable = tomledit.ErrNotEditable
	// ErrNoEntries is returned by SetMany for an empty batch.
	ErrNoEntries = errors.New("config/set-many needs at least one entry in sets")
	// ErrTooManyEntries is returned by SetMany for a batch of more than MaxSetEntries.
	ErrTooManyEntries = errors.New("config/set-many accepts at most 256 entries in sets")
)

// FileError is a syntax or type error at a known place in a config file. It matches ErrInvalidConfig.
type FileError = tomledit.FileError

// Problem is one validation failure: the property path, what is wrong, and the file line when known (0 otherwise).
type Problem struct {
	Path    string
	Message string
	Line    int
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s: %s (line %d)", p.Path, p.Message, p.Line)
	}
	return fmt.Sprintf("%s: %s", p.Path, p.Message)
}

// ValidationError lists every problem found in one config, in a deterministic order.
type ValidationError struct {
	File     string
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	file := e.File
	if file == "" {
		file = "candidate"
	}
	return fmt.Sprintf("config: %s: %d problem(s): %s", file, len(e.Problems), strings.Join(parts, "; "))
}

// Is makes a *ValidationError match ErrInvalidConfig.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidConfig }

// EntryError is a failure of one entry of a Set/SetMany batch; Index is zero-based. Single is set for a
// one-property Set, whose message names the property alone (there is no batch to index into).
type EntryError struct {
	Index  int
	Prop   string
	Err    error
	Single bool
	// Batch names the list Index counts in ("sets" when empty; Patch's is "ops").
	Batch string
}

func (e *EntryError) Error() string {
	msg := e.detail()
	if e.Single {
		return fmt.Sprintf("config: %s: %s", e.Prop, msg)
	}
	batch := e.Batch
	if batch == "" {
		batch = "sets"
	}
	return fmt.Sprintf("config: %s[%d] %s: %s", batch, e.Index, e.Prop, msg)
}

func (e *EntryError) Unwrap() error { return e.Err }

// detail is what went wrong with the entry, without the prefix and property name its Error already gives: a
// validation failure or file error about the entry's own property alone is its message and where in the file
// it is (config.toml:11), not the file's problem list repeating the property.
func (e *EntryError) detail() string {
	switch err := e.Err.(type) {
	case *ValidationError:
		if len(err.Problems) == 1 && err.Problems[0].Path == e.Prop {
			p := err.Problems[0]
			return p.Message + " (" + where(err.File, p.Line, 0) + ")"
		}
	case *FileError:
		if err.Key == e.Prop {
			return err.Msg + " (" + where(err.File, err.Line, err.Column) + ")"
		}
	}
	return strings.TrimPrefix(e.Err.Error(), "config: ")
}

// where names a place in file: file:line[:column], or file alone when the line is not known.
func where(file string, line, col int) string {
	if file == "" {
		file = "candidate"
	}
	switch {
	case line <= 0:
		return file
	case col <= 0:
		return fmt.Sprintf("%s:%d", file, line)
	}
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

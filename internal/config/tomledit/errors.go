package tomledit

import (
	"errors"
	"fmt"
)

// The messages keep the "config:" prefix: package config re-exports these values and types, and they reach
// users and the wire through it.
var (
	// ErrInvalidConfig matches every *FileError (config's ErrInvalidConfig, which its ValidationError matches
	// too).
	ErrInvalidConfig = errors.New("config: invalid config")
	// ErrNotEditable is returned for an edit the surgical editor cannot make without rewriting
	// unrelated text (keys inside inline tables or array tables, whole tables).
	ErrNotEditable = errors.New("config: property not editable in place")
)

// FileError is a syntax or type error at a known place in a config file.
type FileError struct {
	File   string
	Line   int
	Column int
	Key    string // property path, when known
	Msg    string
}

func (e *FileError) Error() string {
	key := e.Key
	if key == "" {
		key = "(document)"
	}
	return fmt.Sprintf("config: %s:%d:%d: %s: %s", e.File, e.Line, e.Column, key, e.Msg)
}

// Is makes a *FileError match ErrInvalidConfig.
func (e *FileError) Is(target error) bool { return target == ErrInvalidConfig }

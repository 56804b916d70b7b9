package config

import (
	"fmt"
	"math"
	"os"
)

// SchemaVersionOf reads only the top-level schema_version of the config file at path, without decoding or
// validating anything else, so that callers can decide on layout migrations before the config is opened.
// A file without the key is version 0. A file that cannot be read (the error wraps fs.ErrNotExist when it is
// missing) or does not parse is an error; a file that parses but whose schema_version is not a non-negative
// integer is an error matching ErrInvalidConfig.
func SchemaVersionOf(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("config: read %s: %w", path, err)
	}
	d, err := parseDocument(path, raw)
	if err != nil {
		return 0, err
	}
	l, ok := d.find(Path{"schema_version"})
	if !ok {
		return 0, nil
	}
	n, ok := l.value.(int64)
	if !ok {
		return 0, &FileError{File: path, Line: l.line, Column: l.col, Key: "schema_version",
			Msg: "must be an integer, got " + valueKind(l.value)}
	}
	if n < 0 || n > math.MaxInt32 {
		return 0, &FileError{File: path, Line: l.line, Column: l.col, Key: "schema_version",
			Msg: fmt.Sprintf("must be a non-negative integer, got %d", n)}
	}
	return int(n), nil
}

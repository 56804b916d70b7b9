package config

import (
	"fmt"
	"math"
	"os"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
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
	d, err := tomledit.Parse(path, raw)
	if err != nil {
		return 0, err
	}
	l, ok := d.Find(Path{"schema_version"})
	if !ok {
		return 0, nil
	}
	n, ok := l.Value.(int64)
	if !ok {
		return 0, &FileError{File: path, Line: l.Line, Column: l.Col, Key: "schema_version",
			Msg: "must be an integer, got " + valueKind(l.Value)}
	}
	if n < 0 || n > math.MaxInt32 {
		return 0, &FileError{File: path, Line: l.Line, Column: l.Col, Key: "schema_version",
			Msg: fmt.Sprintf("must be a non-negative integer, got %d", n)}
	}
	return int(n), nil
}

package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

func TestSchemaVersionOf(t *testing.T) {
	cases := []struct {
		name, text string
		want       int
	}{
		{"missing key", "# old install\n[agents.default]\nmodel_provider = \"echo.default\"\n", 0},
		{"empty file", "", 0},
		{"version 2", "# kept\nschema_version = 2\n[agents.default]\nmodel_provider = \"echo.default\"\n", 2},
		{"current", string(DefaultTOML()), SchemaVersion},
		// Only the version is read: a file that would fail validation still answers.
		{"invalid otherwise", "schema_version = 1\n[agents.a]\nmodel_provider = \"nope.none\"\nbogus = 1\n", 1},
		// A schema_version key inside a table is not the document's version.
		{"nested key", "[agents.default]\nschema_version = 7\n", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SchemaVersionOf(writeConfig(t, tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("SchemaVersionOf = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSchemaVersionOfErrors(t *testing.T) {
	if _, err := SchemaVersionOf(filepath.Join(t.TempDir(), "config.toml")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	for name, text := range map[string]string{
		"syntax":       "schema_version = 2\n[agents\n",
		"duplicate":    "schema_version = 2\nschema_version = 3\n",
		"string":       "schema_version = \"3\"\n",
		"negative":     "schema_version = -1\n",
		"float":        "schema_version = 2.5\n",
		"out of range": "schema_version = 99999999999\n",
	} {
		t.Run(name, func(t *testing.T) {
			v, err := SchemaVersionOf(writeConfig(t, text))
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("SchemaVersionOf = %d, %v; want an ErrInvalidConfig error", v, err)
			}
		})
	}
}

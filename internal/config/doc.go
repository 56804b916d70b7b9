// Package config owns zeroclaw's config.toml: the schema, loading and validation, property paths, atomic
// saves, secrets at rest, and the Manager holding the live snapshot. The comment-preserving text edits are
// config/tomledit's; the rules that read an older upstream schema are config/upstream's.
package config

// Package config owns zeroclaw's config.toml: the schema, loading and validation, property paths,
// comment-preserving surgical edits, atomic saves, secrets at rest, and the Manager holding the live snapshot.
package config

// Package tomledit is the comment-preserving TOML text editor under config.toml: it parses a file into the
// positions of its keys and tables (Document), changes one key or one map entry at a time by splicing only
// the bytes concerned (Set, Delete, EnsureTable, DeleteEntry, RenameEntry), and renders a whole tree keeping
// an older file's comments (Render, for the schema migration). It knows TOML and property paths, not the
// schema: package config resolves paths against the schema and decides what to write.
package tomledit

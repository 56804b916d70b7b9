// Package jsonl is the JSONL chat-session backend (one file per session, upstream's format; Chat) and the
// import of legacy JSONL sessions into the SQLite chat database (ImportDir, Import; state.md §4–§5). Both
// keep their metadata, messages and receipts in a store.ChatStore, reached through its Seam.
package jsonl

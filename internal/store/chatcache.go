package store

import (
	"slices"
	"sync"
)

// rowCounts remembers each session's message count as the writer last committed it, so that Append learns a new
// message's index without counting the session's rows every time. The cache is only trusted while no other
// connection has committed to the database since the writer last looked: PRAGMA data_version, read on the writer
// connection inside each batch's transaction, changes exactly when another connection (another process: an
// upstream binary, a test build sharing the file) committed, and the whole cache is dropped then. mu is held
// across the whole transaction of every path of ours that changes a session's rows (a batch of appends, Delete,
// the JSONL import), so the cache and the database change together: a count is never read between another path's
// commit and its cache update.
//
// It also keeps sessions' histories (hist): All reads a session from the database once, and this store's own
// appends extend what it read when their batch commits, so a turn's history load is not a query. The same rules
// keep it right: it is dropped with the counts when another connection committed (All reads data_version on the
// writer first), a path of ours that changes a session's rows (Delete, the import) drops that session's, and a
// write that failed drops it too. gen counts our writes, so an All that read the database while one committed
// does not keep what it read.
type rowCounts struct {
	mu          sync.Mutex
	dataVersion int64
	n           map[string]int // nil until the first append

	hist      map[string][]Message // sessions' messages, oldest first; nil until the first All
	histBytes int                  // content bytes held in hist
	gen       uint64               // bumped by each of our commits that changes a session's rows
}

// Bounds of the history cache; past them it starts over. A longer session is read from the database each time.
const (
	maxCachedHistories = 256
	maxHistoryBytes    = 32 << 20
	maxCachedMessages  = 4096
)

// batchCounts are the counts of the batch being committed: a session's message count after the batch's
// operations that succeeded so far, or -1 when one of its operations failed (its rows are counted again).
type batchCounts struct {
	version     int64 // PRAGMA data_version in the batch's transaction, once haveVersion
	haveVersion bool
	n           map[string]int
	msgs        []batchMessage // the messages of the batch's operations that succeeded so far, in order
}

// batchMessage is a message a batch's operation appended, kept to extend the cached history once it commits.
type batchMessage struct {
	key               string
	idx               int
	role, content, ts string
}

// maxCachedCounts bounds the cache; past it the cache starts over (a recount is one indexed COUNT per session).
const maxCachedCounts = 4096

// lookup returns key's cached count, first dropping the cache if another connection committed. mu must be held.
func (c *rowCounts) lookup(key string, dataVersion int64) (int, bool) {
	c.seen(dataVersion)
	n, ok := c.n[key]
	return n, ok
}

// seen drops everything cached when another connection committed since the last look. mu must be held.
func (c *rowCounts) seen(dataVersion int64) {
	if c.dataVersion != dataVersion {
		c.dataVersion, c.n, c.hist, c.histBytes = dataVersion, nil, nil, 0
	}
}

// forget drops key's count and history after a write of ours that changed its rows, or may have. mu must be
// held.
func (c *rowCounts) forget(key string) {
	delete(c.n, key)
	c.dropHistory(key)
	c.gen++
}

func (c *rowCounts) dropHistory(key string) {
	for _, m := range c.hist[key] {
		c.histBytes -= len(m.Content)
	}
	delete(c.hist, key)
}

// appended extends key's cached history by the message our writer just committed at index idx (a history
// that does not end right before it is dropped). mu must be held.
func (c *rowCounts) appended(key string, idx int, role, content, ts string) {
	c.gen++
	h, ok := c.hist[key]
	if !ok {
		return
	}
	created, err := parseTime(ts)
	if err != nil || len(h) != idx || len(h) >= maxCachedMessages || c.histBytes+len(content) > maxHistoryBytes {
		c.dropHistory(key)
		return
	}
	c.hist[key] = append(h, Message{Index: idx, Role: role, Content: content, CreatedAt: created})
	c.histBytes += len(content)
}

// keep caches msgs as key's history. mu must be held.
func (c *rowCounts) keep(key string, msgs []Message) {
	size := 0
	for _, m := range msgs {
		size += len(m.Content)
	}
	if len(msgs) > maxCachedMessages || size > maxHistoryBytes {
		return
	}
	c.dropHistory(key)
	if c.hist == nil || len(c.hist) >= maxCachedHistories || c.histBytes+size > maxHistoryBytes {
		c.hist, c.histBytes = make(map[string][]Message), 0
	}
	c.hist[key] = slices.Clip(msgs)
	c.histBytes += size
}

// store records key's count after a committed append. mu must be held.
func (c *rowCounts) store(key string, n int) {
	if c.n == nil || len(c.n) >= maxCachedCounts {
		c.n = make(map[string]int)
	}
	c.n[key] = n
}

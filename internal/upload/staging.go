package upload

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// Binding is the session incarnation an upload was begun for; commit stores the file only into that one.
type Binding struct {
	SessionID  string
	Owner      string
	Agent      string
	Generation uint64
}

// BeginRequest is what file/upload/begin asks for.
type BeginRequest struct {
	SizeBytes int64
	Filename  *string // nil: none given
	MimeType  string
	SHA256    *string // nil: none declared
}

// upload is one staged upload. Its id, size and metadata are fixed at begin.
type upload struct {
	id       string
	size     int64
	charge   int64
	binding  Binding
	filename string
	mime     string
	sha      string // the declared SHA-256, lowercase hex; "" when none was declared

	mu       sync.Mutex // guards the fields below
	data     []byte     // size bytes once the first chunk arrives; nil before and once released
	received int64
	last     time.Time // the last begin, chunk or commit
	dead     bool      // released, reclaimed, or handed to a commit: the upload is gone

	// The SHA-256 of the received bytes is computed as they arrive, in order, by a goroutine that runs while
	// data[hashed:received] is not yet hashed (so it overlaps the client preparing its next chunk): the commit
	// then only waits for the last chunk. Whoever takes data away waits for that goroutine first (detach).
	sum    hash.Hash     // over data[:hashed]; used by the hashing goroutine, then by the commit
	hashed int64         // how much of data sum has seen
	hasher chan struct{} // non-nil while the hashing goroutine runs; closed when it ends
}

// hashLoop feeds sum the received bytes not hashed yet until it has caught up (or data is gone), then ends,
// closing done.
func (u *upload) hashLoop(done chan struct{}) {
	defer close(done)
	for {
		u.mu.Lock()
		from, to, data := u.hashed, u.received, u.data
		if from >= to || data == nil {
			u.hasher = nil
			u.mu.Unlock()
			return
		}
		u.mu.Unlock()
		if hashing != nil {
			hashing()
		}
		u.sum.Write(data[from:to]) // received bytes never change, and data is not freed while this runs
		u.mu.Lock()
		u.hashed = to
		u.mu.Unlock()
	}
}

// startHashLocked makes sure the received bytes get hashed. The caller holds u.mu.
func (u *upload) startHashLocked() {
	if u.hasher != nil || u.hashed >= u.received {
		return
	}
	if u.sum == nil {
		u.sum = sha256.New()
	}
	u.hasher = make(chan struct{})
	go u.hashLoop(u.hasher)
}

// detachLocked takes the upload's bytes away (data becomes nil) and returns a function that waits until the
// hashing goroutine no longer reads them and then returns them; the caller holds u.mu and must call it after
// unlocking.
func (u *upload) detachLocked() func() []byte {
	data, h := u.data, u.hasher
	u.data = nil
	return func() []byte {
		if h != nil {
			<-h
		}
		return data
	}
}

// Staging holds the uploads one connection began. It is safe for concurrent use, though a connection's
// requests normally arrive one at a time; Close (the connection's end) may come from anywhere.
type Staging struct {
	b *Budget

	mu      sync.Mutex // guards the fields below
	uploads map[string]*upload
	closed  bool
}

// NewStaging returns the staging area of a new connection.
func (b *Budget) NewStaging() *Staging {
	return &Staging{b: b, uploads: map[string]*upload{}}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func unknown(id string) error { return invalid("unknown or expired upload %q", id) }

// Begin stages a new upload and returns its id (32 lowercase hex digits). The checks run in protocol.md §7's
// order: the size (0..api.MaxFileBytes), the filename (at most api.MaxFilenameBytes), the declared sha256 (64
// hex digits), then bind, which resolves and authorizes the session, then the connection's api.MaxUploadsPerConn,
// then the budget (after reclaiming idle uploads). Every refusal but bind's wraps ErrInvalid.
func (s *Staging) Begin(req BeginRequest, bind func() (Binding, error)) (string, error) {
	now := s.b.now()
	switch {
	case req.SizeBytes < 0:
		return "", invalid("size_bytes must not be negative, got %d", req.SizeBytes)
	case req.SizeBytes > api.MaxFileBytes:
		return "", invalid("size_bytes %d exceeds the %d-byte file limit", req.SizeBytes, api.MaxFileBytes)
	case req.Filename != nil && len(*req.Filename) > api.MaxFilenameBytes:
		return "", invalid("filename is %d bytes; the limit is %d", len(*req.Filename), api.MaxFilenameBytes)
	case len(req.MimeType) > api.MaxFilenameBytes:
		return "", invalid("mime_type is %d bytes; the limit is %d", len(req.MimeType), api.MaxFilenameBytes)
	}
	var sha string
	if req.SHA256 != nil {
		var err error
		if sha, err = normalizeSHA256(*req.SHA256); err != nil {
			return "", err
		}
	}
	binding, err := bind()
	if err != nil {
		return "", err
	}
	u := &upload{size: req.SizeBytes, binding: binding, mime: req.MimeType, sha: sha, last: now}
	if req.Filename != nil {
		u.filename = *req.Filename
	}
	u.charge = u.size + metaOverhead + int64(len(binding.SessionID)+len(binding.Owner)+len(binding.Agent)+
		len(u.filename)+len(u.mime)+len(u.sha))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", invalid("the connection is closing")
	}
	s.evictIdleLocked(now)
	if len(s.uploads) >= api.MaxUploadsPerConn {
		return "", invalid("this connection already has %d uploads in progress; commit them or let them expire (%s idle) first",
			api.MaxUploadsPerConn, IdleTimeout)
	}
	if !s.b.reserve(u, now) {
		return "", invalid("the daemon is staging too many uploads (%d bytes at most) to accept %d more bytes now; retry later",
			s.b.limit, u.charge)
	}
	u.id = newUploadID()
	s.uploads[u.id] = u
	return u.id, nil
}

// evictIdleLocked forgets the uploads that were reclaimed by the budget or are idle past IdleTimeout,
// releasing the latter. The caller holds s.mu.
func (s *Staging) evictIdleLocked(now time.Time) {
	for id, u := range s.uploads {
		u.mu.Lock()
		dead, idle := u.dead, now.Sub(u.last) >= IdleTimeout
		u.mu.Unlock()
		if dead || idle {
			delete(s.uploads, id)
			s.b.release(u)
		}
	}
}

// get returns the live upload id of this connection, after evicting idle ones.
func (s *Staging) get(id string, now time.Time) (*upload, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evictIdleLocked(now)
	u := s.uploads[id]
	if u == nil {
		return nil, unknown(id)
	}
	return u, nil
}

// Chunk adds the base64 data at offset and returns the bytes received so far. A chunk holds 1..
// api.UploadChunkBytes decoded bytes and must start at the received count; re-sending an accepted chunk with the
// same bytes is acknowledged and changes nothing; other bytes at an accepted offset (overlap), an offset past
// the received count (gap) and bytes past the declared size are refused (ErrInvalid).
func (s *Staging) Chunk(id string, offset int64, dataB64 string) (int64, error) {
	return s.ChunkBytes(id, offset, bytesOf(dataB64))
}

// ChunkBytes is Chunk with the base64 in a byte slice (a slice of the request's frame: the chunk is decoded
// straight from it into the staged bytes). dataB64 is only read, and not kept.
func (s *Staging) ChunkBytes(id string, offset int64, dataB64 []byte) (int64, error) {
	return s.chunk(id, offset, func() (int, error) { return decodedLen(dataB64) }, func(dst []byte) error {
		if m, err := decodeB64(dst, dataB64); err != nil || m != len(dst) {
			return invalid("data_b64 is not valid padded standard base64")
		}
		return nil
	})
}

// ChunkRaw is Chunk with the chunk's bytes themselves (a binary chunk: they followed the request on the stream),
// under the same rules. data is only read, and not kept.
func (s *Staging) ChunkRaw(id string, offset int64, data []byte) (int64, error) {
	return s.chunk(id, offset, func() (int, error) { return len(data), nil }, func(dst []byte) error {
		copy(dst, data)
		return nil
	})
}

// chunk adds a chunk of measure() bytes at offset, which fill writes into its destination (or fails, leaving
// nothing received), and returns the bytes received so far; see Chunk for the rules.
func (s *Staging) chunk(id string, offset int64, measure func() (int, error), fill func(dst []byte) error) (int64, error) {
	now := s.b.now()
	u, err := s.get(id, now)
	if err != nil {
		return 0, err
	}
	n, err := measure()
	if err != nil {
		return 0, err
	}
	if n == 0 || n > api.UploadChunkBytes {
		return 0, invalid("a chunk must carry 1 to %d decoded bytes, got %d", api.UploadChunkBytes, n)
	}
	if offset < 0 {
		return 0, invalid("offset must not be negative, got %d", offset)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.dead {
		return 0, unknown(id)
	}
	end := offset + int64(n)
	switch {
	case offset < u.received:
		if end <= u.received {
			chunk := make([]byte, n)
			if fill(chunk) == nil && bytes.Equal(chunk, u.data[offset:end]) {
				u.last = now
				return u.received, nil
			}
		}
		return 0, invalid("chunk at offset %d overlaps received data with other bytes; the next offset is %d", offset, u.received)
	case offset > u.received:
		return 0, invalid("chunk at offset %d leaves a gap; the next offset is %d", offset, u.received)
	case end > u.size:
		return 0, invalid("chunk ends at byte %d, past the declared size of %d", end, u.size)
	}
	if u.data == nil {
		u.data = alloc(int(u.size))
	}
	// Written straight into the staged bytes; they count as received only once the whole chunk is there.
	if err := fill(u.data[offset:end:end]); err != nil {
		return 0, err
	}
	u.received = end
	u.last = now
	u.startHashLocked()
	return end, nil
}

// Binding returns the session incarnation upload id was begun for.
func (s *Staging) Binding(id string) (Binding, error) {
	u, err := s.get(id, s.b.now())
	if err != nil {
		return Binding{}, err
	}
	return u.binding, nil
}

// Completed is a fully received upload handed to its commit. Release must be called once the bytes are stored
// (or not): it frees them and returns the budget's charge.
type Completed struct {
	Binding  Binding
	Filename string
	MimeType string
	Data     []byte
	Sum      [sha256.Size]byte
	u        *upload
	b        *Budget
}

// Release frees the bytes and returns the charge; it may be called more than once.
func (c *Completed) Release() {
	if c.u == nil {
		return
	}
	free(c.Data)
	c.Data = nil
	c.b.uncharge(c.u)
	c.u = nil
}

// File is the completed upload as a file to store.
func (c *Completed) File() File {
	return File{Data: c.Data, Sum: c.Sum, Filename: c.Filename, MimeType: c.MimeType}
}

// Take hands a fully received upload to its commit and forgets it. An incomplete upload is refused (ErrInvalid)
// and stays open; one whose bytes do not match the declared SHA-256 is discarded and refused.
func (s *Staging) Take(id string) (*Completed, error) {
	now := s.b.now()
	u, err := s.get(id, now)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	if u.dead {
		u.mu.Unlock()
		return nil, unknown(id)
	}
	u.last = now
	if u.received != u.size {
		u.mu.Unlock()
		return nil, invalid("upload has %d of %d declared bytes; send the rest before committing", u.received, u.size)
	}
	// The upload is complete and the commit's now: being dead, nothing else takes or frees its bytes, which
	// stay in place until the hashing goroutine has fed the last of them to sum.
	u.dead = true
	h := u.hasher
	u.mu.Unlock()
	if h != nil {
		<-h
	}
	u.mu.Lock()
	data := u.data
	u.data = nil
	u.mu.Unlock()
	if data == nil {
		data = []byte{}
	}
	var sum [sha256.Size]byte
	if u.sum != nil {
		u.sum.Sum(sum[:0])
	} else {
		sum = sha256.Sum256(nil)
	}
	s.forget(id)
	if u.sha != "" && u.sha != hex.EncodeToString(sum[:]) {
		free(data)
		s.b.uncharge(u)
		return nil, invalid("upload content does not match the sha256 declared at begin (got %x); the upload is discarded, begin again", sum)
	}
	return &Completed{Binding: u.binding, Filename: u.filename, MimeType: u.mime, Data: data, Sum: sum, u: u, b: s.b}, nil
}

func (s *Staging) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.uploads, id)
}

// Len returns how many uploads the connection has staged (idle ones included until they are evicted).
func (s *Staging) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.uploads)
}

// Close drops every upload of the connection and refuses new ones. It is called when the connection ends.
func (s *Staging) Close() {
	s.mu.Lock()
	ups := s.uploads
	s.uploads, s.closed = map[string]*upload{}, true
	s.mu.Unlock()
	for _, u := range ups {
		s.b.release(u)
	}
}

// normalizeSHA256 accepts 64 hex digits, either case, and returns them lowercase.
func normalizeSHA256(h string) (string, error) {
	if len(h) != 2*sha256.Size {
		return "", invalid("sha256 must be 64 hexadecimal digits, got %d characters", len(h))
	}
	if _, err := hex.DecodeString(h); err != nil {
		return "", invalid("sha256 must be 64 hexadecimal digits")
	}
	return strings.ToLower(h), nil
}

// decodedLen is the exact length of padded standard base64 s once decoded, checked before any decoding so a
// chunk is measured without allocating. It does not validate the alphabet (decoding does).
func decodedLen(s []byte) (int, error) {
	if len(s)%4 != 0 {
		return 0, invalid("data_b64 is not valid padded base64 (length %d is not a multiple of 4)", len(s))
	}
	n := len(s) / 4 * 3
	if bytes.HasSuffix(s, []byte("==")) {
		n -= 2
	} else if bytes.HasSuffix(s, []byte("=")) {
		n--
	}
	return n, nil
}

// bytesOf views s as bytes without copying it (a chunk's base64 is over a megabyte); the result must only be
// read, as base64 decoding does.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// newUploadID returns 32 lowercase hex digits from crypto/rand.
func newUploadID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

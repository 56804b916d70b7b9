// Package pairing is the gateway's pairing domain (state.md §7, upstream/gateway.md §2): the one-time 6-digit
// code, the bearer tokens ("zc_" + 64 hex) stored only as SHA-256 hex in gateway.paired_tokens, the per-client
// lockout after failed codes, and the device registry (data/devices.db) reconciled against the token hashes.
// Access is decided by the configured hashes alone; the registry is metadata.
package pairing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Limits of the failed-code guard (upstream's hard-coded values).
const (
	MaxFailedAttempts = 5
	LockoutDuration   = 300 * time.Second
	GuardIdleForget   = 15 * time.Minute
	GuardMaxClients   = 10000
	CodeDigits        = 6
	TokenPrefix       = "zc_"
)

// The errors of this domain.
var (
	// ErrInvalidCode: the code is wrong, or no code is pending.
	ErrInvalidCode = errors.New("pairing: invalid pairing code")
	// ErrDisabled: gateway.require_pairing is false, so there is nothing to pair.
	ErrDisabled = errors.New("pairing: pairing is disabled")
	// ErrNotFound: no device has that id.
	ErrNotFound = errors.New("pairing: device not found")
	// ErrUnknownProfile: a code was asked for with a profile permission_profiles does not define.
	ErrUnknownProfile = errors.New("pairing: unknown permission profile")
)

// LockedError refuses a client that gave MaxFailedAttempts wrong codes, until RetryAfter has passed.
type LockedError struct{ RetryAfter time.Duration }

func (e *LockedError) Error() string {
	return fmt.Sprintf("pairing: too many failed attempts; try again in %ds", Seconds(e.RetryAfter))
}

// Seconds rounds d up to whole seconds (at least 1), as retry_after is reported.
func Seconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// Options wire a Manager.
type Options struct {
	Config  *config.Manager    // the live config; paired_tokens are written through it (comments survive)
	Devices *store.DeviceStore // nil: no registry (pairing still works)
	Clock   clock.Clock        // nil: clock.Real
	Rand    io.Reader          // nil: crypto/rand
	Logger  *slog.Logger
}

// DeviceInfo is what a client says about itself when it pairs.
type DeviceInfo struct {
	Name, Type, IP string
}

// Paired is the result of a successful pairing: the token, shown once, and the device registered for it.
type Paired struct {
	Token  string
	Device store.Device
}

// Manager holds the pending code and the guard. mu guards the fields below it; writeMu serializes the
// read-modify-write of gateway.paired_tokens (pair, revoke) and is taken before mu.
type Manager struct {
	o       Options
	log     *slog.Logger
	writeMu sync.Mutex

	mu   sync.Mutex
	code string // the pending one-time code; "" when none
	// profile is the permission profile the device paired with code gets ("": the default device grants).
	profile string
	guard   map[string]*attempts
	hashed  hashCache
	seen    map[string]time.Time // token hash → last last_seen write (Touch writes at most once a minute)
	ids     map[string]string    // token hash → device id, as looked up (cleared when devices change)
	budget  globalBudget
}

// globalBudget counts wrong codes from every client together (gateway.pairing_failure_budget in
// pairing_failure_window_secs): a spray from many client keys, each under the per-client lockout, still spends
// it. Spent, it replaces the pending code and pauses pairing until the window has passed; the new code reaches
// the owner through rotated only (the daemon's terminal), never over HTTP.
type globalBudget struct {
	failed  []time.Time // within the window, oldest first
	paused  time.Time   // pairing refused until then
	rotated func(code string, failures int, window time.Duration)
}

// OnRotate sets what is told the code that replaces one after the failure budget was spent (called without the
// manager's lock, at most once per spent budget; it must not block).
func (m *Manager) OnRotate(fn func(code string, failures int, window time.Duration)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.budget.rotated = fn
}

type attempts struct {
	failed      int
	lockedUntil time.Time
	lastSeen    time.Time
}

// hashCache is the set of token hashes of one config snapshot.
type hashCache struct {
	from *config.Config
	set  map[string]bool
}

// New builds the manager, prunes devices whose token is no longer configured and, when pairing is required and
// no token is paired yet, creates the first code.
func New(ctx context.Context, o Options) (*Manager, error) {
	o.Clock = clock.OrReal(o.Clock)
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{o: o, log: o.Logger, guard: map[string]*attempts{}, seen: map[string]time.Time{}, ids: map[string]string{}}
	if err := m.Reconcile(ctx); err != nil {
		m.log.Warn("device registry not reconciled", "component", "pairing", "err", err)
	}
	if _, _, err := m.EnsureFirstCode(); err != nil {
		return nil, err
	}
	return m, nil
}

// EnsureFirstCode creates a code when pairing is required, no token is configured and no code is pending (at
// start, and after a reload that removed every token). fresh reports that this call made it.
func (m *Manager) EnsureFirstCode() (code string, fresh bool, err error) {
	cfg, set := m.hashes()
	if !cfg.Gateway.RequirePairing || len(set) > 0 {
		return "", false, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.code != "" {
		return m.code, false, nil
	}
	code, err = m.newCodeLocked("")
	return code, err == nil, err
}

// HashToken is the stored form of a token: SHA-256, lowercase hex.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// normalizeHash returns a configured entry as a hash: a 64-hex value is one; anything else is a plaintext
// token put there by hand, hashed as upstream does on load.
func normalizeHash(v string) string {
	v = strings.TrimSpace(v)
	if len(v) == 64 {
		if _, err := hex.DecodeString(v); err == nil {
			return strings.ToLower(v)
		}
	}
	return HashToken(v)
}

// hashes returns the token hashes of the config in force.
func (m *Manager) hashes() (*config.Config, map[string]bool) {
	cfg := m.o.Config.Current()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hashed.from != cfg {
		set := make(map[string]bool, len(cfg.Gateway.PairedTokens))
		for _, v := range cfg.Gateway.PairedTokens {
			if strings.TrimSpace(v) != "" {
				set[normalizeHash(v)] = true
			}
		}
		m.hashed = hashCache{from: cfg, set: set}
	}
	return cfg, m.hashed.set
}

// Required reports whether the config in force requires pairing.
func (m *Manager) Required() bool { return m.o.Config.Current().Gateway.RequirePairing }

// IsPaired reports whether at least one token is configured.
func (m *Manager) IsPaired() bool {
	_, set := m.hashes()
	return len(set) > 0
}

// Authenticate reports whether token is a paired token, and its hash. The comparison is against the hashes
// of the config in force, so a token removed from the file stops working at the next reload.
func (m *Manager) Authenticate(token string) (string, bool) {
	token = strings.TrimSpace(token)
	if token == "" {
		return "", false
	}
	h := HashToken(token)
	_, set := m.hashes()
	return h, set[h]
}

// Configured reports whether hash is one of cfg's paired token hashes (cfg may be another snapshot than the
// one in force, e.g. the one a config write is checked against).
func (m *Manager) Configured(cfg *config.Config, hash string) bool {
	for _, v := range cfg.Gateway.PairedTokens {
		if strings.TrimSpace(v) != "" && normalizeHash(v) == hash {
			return true
		}
	}
	return false
}

// PendingCode returns the pending code, or "" when there is none.
func (m *Manager) PendingCode() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.code
}

// Code returns the pending code, creating one when none is pending. It is ErrDisabled when pairing is off.
// The device paired with it gets the default device grants.
func (m *Manager) Code() (string, error) { return m.CodeFor("") }

// CodeFor returns a code whose device gets permission profile profile ("": the default device grants): the
// pending one when it carries that profile, else a new one that replaces it. It is ErrUnknownProfile when
// permission_profiles does not define profile, ErrDisabled when pairing is off.
func (m *Manager) CodeFor(profile string) (string, error) {
	cfg := m.o.Config.Current()
	if !cfg.Gateway.RequirePairing {
		return "", ErrDisabled
	}
	if _, ok := cfg.PermissionProfiles[profile]; profile != "" && !ok {
		return "", fmt.Errorf("%w %q (defined: %s)", ErrUnknownProfile, profile, strings.Join(slices.Sorted(maps.Keys(cfg.PermissionProfiles)), ", "))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.code != "" && m.profile == profile {
		return m.code, nil
	}
	return m.newCodeLocked(profile)
}

// PendingProfile is the profile of the pending code's device ("" : the default grants, or no code pending).
func (m *Manager) PendingProfile() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.profile
}

// Profile is the permission profile cfg's gateway.paired_token_profiles gives the device holding hash, "" when
// it lists none (the device gets the default device grants).
func Profile(cfg *config.Config, hash string) string {
	for _, e := range cfg.Gateway.PairedTokenProfiles {
		if h, p, ok := strings.Cut(e, ":"); ok && strings.EqualFold(h, hash) {
			return p
		}
	}
	return ""
}

// newCodeLocked draws a uniform 6-digit code (rejection sampling, so no digit is favoured) for a device that
// gets profile. mu is held, or the manager is not shared yet.
func (m *Manager) newCodeLocked(profile string) (string, error) {
	const limit = 1_000_000
	const bound = (1 << 32) / limit * limit
	var b [4]byte
	for {
		if _, err := io.ReadFull(m.o.Rand, b[:]); err != nil {
			return "", fmt.Errorf("pairing: code: %w", err)
		}
		if v := binary.BigEndian.Uint32(b[:]); v < bound {
			m.code = fmt.Sprintf("%0*d", CodeDigits, v%limit)
			m.profile = profile
			return m.code, nil
		}
	}
}

// check applies the guard to client and the code: a locked client is a *LockedError; a wrong code counts
// towards the lockout and is ErrInvalidCode; the right one is consumed, and its profile returned.
func (m *Manager) check(client, code string) (string, error) {
	now := m.o.Clock.Now()
	g := m.o.Config.Current().Gateway
	m.mu.Lock()
	if now.Before(m.budget.paused) {
		m.mu.Unlock()
		return "", &LockedError{RetryAfter: m.budget.paused.Sub(now)}
	}
	profile, err := m.checkClientLocked(now, client, code)
	var tell func()
	if errors.Is(err, ErrInvalidCode) {
		tell = m.spendLocked(now, g.PairingFailureBudget, time.Duration(g.PairingFailureWindowSecs)*time.Second)
	}
	m.mu.Unlock()
	if tell != nil {
		tell()
	}
	return profile, err
}

// spendLocked counts a wrong code against the global budget; spent, it pauses pairing for the window and
// replaces the pending code, returning the call that tells the owner (nil otherwise). mu is held.
func (m *Manager) spendLocked(now time.Time, budget int, window time.Duration) func() {
	if budget <= 0 || window <= 0 {
		return nil
	}
	b := &m.budget
	i := 0
	for i < len(b.failed) && now.Sub(b.failed[i]) >= window {
		i++
	}
	b.failed = append(b.failed[i:], now)
	if len(b.failed) < budget {
		return nil
	}
	n := len(b.failed)
	b.failed, b.paused = nil, now.Add(window)
	m.log.Warn("pairing paused: too many wrong pairing codes from all clients; the pending code was replaced",
		"component", "pairing", "failures", n, "window", window.String())
	if m.code == "" {
		return nil
	}
	code, err := m.newCodeLocked(m.profile) // the replacement keeps the profile the code was issued for
	if err != nil {
		m.code = "" // the old code must not outlive the budget
		m.log.Error("no new pairing code", "component", "pairing", "err", err)
		return nil
	}
	if fn := b.rotated; fn != nil {
		return func() { fn(code, n, window) }
	}
	return nil
}

// checkClientLocked is check's per-client part. mu is held.
func (m *Manager) checkClientLocked(now time.Time, client, code string) (string, error) {
	m.sweepLocked(now)
	a := m.guard[client]
	if a != nil && now.Before(a.lockedUntil) {
		return "", &LockedError{RetryAfter: a.lockedUntil.Sub(now)}
	}
	code = strings.TrimSpace(code)
	if m.code != "" && subtle.ConstantTimeCompare([]byte(code), []byte(m.code)) == 1 {
		delete(m.guard, client)
		profile := m.profile
		m.code, m.profile = "", ""
		return profile, nil
	}
	if a == nil {
		a = &attempts{}
		m.guard[client] = a
	}
	if !a.lockedUntil.IsZero() { // a lockout that has passed starts a fresh count
		a.failed, a.lockedUntil = 0, time.Time{}
	}
	a.failed++
	a.lastSeen = now
	if a.failed >= MaxFailedAttempts {
		a.lockedUntil = now.Add(LockoutDuration)
	}
	return "", ErrInvalidCode
}

// sweepLocked forgets clients idle past GuardIdleForget and, past GuardMaxClients, the least recently seen.
func (m *Manager) sweepLocked(now time.Time) {
	for k, a := range m.guard {
		if now.Sub(a.lastSeen) > GuardIdleForget && !now.Before(a.lockedUntil) {
			delete(m.guard, k)
		}
	}
	for len(m.guard) >= GuardMaxClients {
		var oldest string
		var at time.Time
		for k, a := range m.guard {
			if oldest == "" || a.lastSeen.Before(at) {
				oldest, at = k, a.lastSeen
			}
		}
		delete(m.guard, oldest)
	}
}

// Pair exchanges the pending code for a new token, persists its hash in gateway.paired_tokens and registers
// the device. client keys the guard (the peer address). A failure to persist or to register rolls the token
// back and leaves the code pending.
func (m *Manager) Pair(ctx context.Context, client, code string, info DeviceInfo) (Paired, error) {
	if !m.Required() {
		return Paired{}, ErrDisabled
	}
	profile, err := m.check(client, code)
	if err != nil {
		return Paired{}, err
	}
	restore := func() {
		m.mu.Lock()
		if m.code == "" {
			m.code, m.profile = strings.TrimSpace(code), profile
		}
		m.mu.Unlock()
	}
	var raw [32]byte
	if _, err := io.ReadFull(m.o.Rand, raw[:]); err != nil {
		restore()
		return Paired{}, fmt.Errorf("pairing: token: %w", err)
	}
	token := TokenPrefix + hex.EncodeToString(raw[:])
	hash := HashToken(token)
	now := m.o.Clock.Now().UTC()
	dev := store.Device{TokenHash: hash, ID: newDeviceID(raw[:]), Name: info.Name, DeviceType: info.Type,
		PairedAt: now, LastSeen: now, IPAddress: info.IP}

	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if err := m.setHashes(ctx, func(h []string) []string { return append(h, hash) }, hash, profile); err != nil {
		restore()
		return Paired{}, err
	}
	if m.o.Devices != nil {
		if err := m.o.Devices.Add(ctx, dev); err != nil {
			if rerr := m.setHashes(ctx, func(h []string) []string { return slices.DeleteFunc(h, func(x string) bool { return x == hash }) }, "", ""); rerr != nil {
				m.log.Error("pairing: token not rolled back after a device registry failure", "component", "pairing", "err", rerr)
			}
			restore()
			return Paired{}, err
		}
	}
	m.log.Info("device paired", "component", "pairing", "device", dev.ID, "profile", profile)
	return Paired{Token: token, Device: dev}, nil
}

// newDeviceID derives a device id from token bytes that are never shown (the id must not reveal the token):
// a fresh hash of them, 16 hex.
func newDeviceID(raw []byte) string {
	sum := sha256.Sum256(append([]byte("zeroclaw-device:"), raw...))
	return hex.EncodeToString(sum[:8])
}

// setHashes rewrites gateway.paired_tokens as edit(current hashes) through the config editor, in one change
// with gateway.paired_token_profiles: the entries of hashes no longer paired are dropped and, when profile is
// set, hash's entry is added. writeMu is held.
func (m *Manager) setHashes(ctx context.Context, edit func([]string) []string, hash, profile string) error {
	cfg := m.o.Config.Current()
	cur := cfg.Gateway.PairedTokens
	hs := make([]string, 0, len(cur)+1)
	for _, v := range cur {
		if strings.TrimSpace(v) != "" {
			hs = append(hs, normalizeHash(v))
		}
	}
	hs = edit(hs)
	if hs == nil {
		hs = []string{}
	}
	val, _ := json.Marshal(hs)
	sets := []config.SetEntry{{Prop: "gateway.paired_tokens", Value: val}}
	profiles := []string{}
	for _, e := range cfg.Gateway.PairedTokenProfiles {
		if h, _, _ := strings.Cut(e, ":"); slices.Contains(hs, strings.ToLower(h)) {
			profiles = append(profiles, e)
		}
	}
	if profile != "" {
		profiles = append(profiles, hash+":"+profile)
	}
	if len(profiles) > 0 || len(cfg.Gateway.PairedTokenProfiles) > 0 {
		pv, _ := json.Marshal(profiles)
		sets = append(sets, config.SetEntry{Prop: "gateway.paired_token_profiles", Value: pv})
	}
	if _, err := m.o.Config.SetMany(ctx, sets, nil); err != nil {
		return fmt.Errorf("pairing: persist paired tokens: %w", err)
	}
	return nil
}

// Devices reconciles the registry with the configured hashes and lists it.
func (m *Manager) Devices(ctx context.Context) ([]store.Device, error) {
	if m.o.Devices == nil {
		return nil, nil
	}
	if err := m.Reconcile(ctx); err != nil {
		return nil, err
	}
	return m.o.Devices.List(ctx)
}

// DeviceID returns the id of the registered device holding the token hash, if any (remembered after the first
// lookup, so authenticating a request reads the registry once per device).
func (m *Manager) DeviceID(ctx context.Context, hash string) (string, bool) {
	m.mu.Lock()
	id, ok := m.ids[hash]
	m.mu.Unlock()
	if ok || m.o.Devices == nil {
		return id, ok
	}
	all, err := m.o.Devices.List(ctx)
	if err != nil {
		return "", false
	}
	for _, d := range all {
		if d.TokenHash == hash {
			m.mu.Lock()
			if len(m.ids) >= GuardMaxClients {
				clear(m.ids)
			}
			m.ids[hash] = d.ID
			m.mu.Unlock()
			return d.ID, true
		}
	}
	return "", false
}

// forgetIDs drops the remembered device ids (the registry changed).
func (m *Manager) forgetIDs() {
	m.mu.Lock()
	clear(m.ids)
	m.mu.Unlock()
}

// Reconcile removes the devices whose token hash is no longer configured (never the reverse: a row cannot
// grant access).
func (m *Manager) Reconcile(ctx context.Context) error {
	if m.o.Devices == nil {
		return nil
	}
	_, set := m.hashes()
	n, err := m.o.Devices.Reconcile(ctx, set)
	if n > 0 {
		m.forgetIDs()
	}
	if n > 0 {
		m.log.Info("removed devices whose token is no longer configured", "component", "pairing", "count", n)
	}
	return err
}

// Revoke removes the device with id and its token hash from the config: the token stops working at once.
func (m *Manager) Revoke(ctx context.Context, id string) error {
	if m.o.Devices == nil {
		return ErrNotFound
	}
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	dev, err := m.o.Devices.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return err
	}
	if err := m.setHashes(ctx, func(h []string) []string {
		return slices.DeleteFunc(h, func(x string) bool { return x == dev.TokenHash })
	}, "", ""); err != nil {
		return err
	}
	_, err = m.o.Devices.Delete(ctx, id)
	m.forgetIDs()
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	m.log.Info("device revoked", "component", "pairing", "device", id)
	return nil
}

// RevokeAll removes every paired token and every device (upstream's rotate=all); the next device needs a code.
func (m *Manager) RevokeAll(ctx context.Context) error {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if err := m.setHashes(ctx, func([]string) []string { return nil }, "", ""); err != nil {
		return err
	}
	m.forgetIDs()
	if m.o.Devices != nil {
		if _, err := m.o.Devices.Reconcile(ctx, nil); err != nil {
			return err
		}
	}
	m.log.Info("every paired device revoked", "component", "pairing")
	return nil
}

// Rotate revokes the device's token and returns a code to pair again, with the device's profile: "" when a
// code was already pending (the holder of that code pairs first) or pairing is off.
func (m *Manager) Rotate(ctx context.Context, id string) (string, error) {
	had := m.PendingCode() != ""
	profile := ""
	if m.o.Devices != nil {
		if dev, err := m.o.Devices.Get(ctx, id); err == nil {
			profile = Profile(m.o.Config.Current(), dev.TokenHash)
		}
	}
	if err := m.Revoke(ctx, id); err != nil {
		return "", err
	}
	if had || !m.Required() {
		return "", nil
	}
	return m.CodeFor(profile)
}

// touchEvery spaces the last_seen writes of one device: a busy client must not make every request a write.
const touchEvery = time.Minute

// Touch records that the device holding hash made a request from ip (at most once per touchEvery).
func (m *Manager) Touch(ctx context.Context, hash, ip string) {
	if m.o.Devices == nil {
		return
	}
	now := m.o.Clock.Now()
	m.mu.Lock()
	last, ok := m.seen[hash]
	if ok && now.Sub(last) < touchEvery {
		m.mu.Unlock()
		return
	}
	if len(m.seen) >= GuardMaxClients {
		clear(m.seen)
	}
	m.seen[hash] = now
	m.mu.Unlock()
	if err := m.o.Devices.Touch(ctx, hash, now, ip); err != nil {
		m.log.Debug("device last_seen not recorded", "component", "pairing", "err", err)
	}
}

// SetCapabilities replaces the capabilities the device holding hash reports.
func (m *Manager) SetCapabilities(ctx context.Context, hash string, caps []string) error {
	if m.o.Devices == nil {
		return ErrNotFound
	}
	if err := m.o.Devices.SetCapabilities(ctx, hash, caps); errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	} else if err != nil {
		return err
	}
	return nil
}

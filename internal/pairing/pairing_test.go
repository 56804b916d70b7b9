package pairing

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

const baseConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
`

type fixture struct {
	m    *Manager
	cfg  *config.Manager
	clk  *clocktest.Manual
	path string
}

func newFixture(t *testing.T, extra string, rnd io.Reader) fixture {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(baseConfig+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Open(path, secrets.New(filepath.Join(dir, ".secret_key")), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := store.OpenDevices(t.Context(), filepath.Join(dir, "devices.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = devs.Close() })
	clk := clocktest.New(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	m, err := New(t.Context(), Options{Config: cfg, Devices: devs, Clock: clk, Rand: rnd})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{m: m, cfg: cfg, clk: clk, path: path}
}

// The first code is made at start when pairing is required and nothing is paired; it is six digits, spent by
// one pairing only, and the token it gives authenticates (its hash is in config.toml, never the token).
func TestPairOnceAndAuthenticate(t *testing.T) {
	f := newFixture(t, "", nil)
	code := f.m.PendingCode()
	if !regexp.MustCompile(`^\d{6}$`).MatchString(code) {
		t.Fatalf("first code %q, want six digits", code)
	}
	p, err := f.m.Pair(t.Context(), "10.0.0.1", " "+code+" ", DeviceInfo{Name: "phone", Type: "mobile", IP: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Token, TokenPrefix) || p.Device.ID == "" || strings.Contains(p.Token, p.Device.ID) {
		t.Fatalf("paired %+v", p)
	}
	if _, err := f.m.Pair(t.Context(), "10.0.0.2", code, DeviceInfo{}); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("the same code twice: %v, want ErrInvalidCode", err)
	}
	if h, ok := f.m.Authenticate(p.Token); !ok || h != HashToken(p.Token) {
		t.Fatalf("Authenticate(token) = %q %v", h, ok)
	}
	if _, ok := f.m.Authenticate(p.Token + "x"); ok {
		t.Fatal("a wrong token authenticated")
	}
	raw, _ := os.ReadFile(f.path)
	if bytes.Contains(raw, []byte(p.Token)) || bytes.Contains(raw, []byte(HashToken(p.Token))) || !bytes.Contains(raw, []byte("paired_tokens = [\"enc2:")) {
		t.Fatalf("config.toml should hold the token's hash encrypted, never the token:\n%s", raw)
	}
	if f.m.PendingCode() != "" {
		t.Fatal("a code is pending after the first pairing")
	}
	devs, err := f.m.Devices(t.Context())
	if err != nil || len(devs) != 1 || devs[0].Name != "phone" {
		t.Fatalf("devices %+v %v", devs, err)
	}
}

// A client that gives MaxFailedAttempts wrong codes is locked out for LockoutDuration (even with the right
// code), while another client still pairs; once the lockout has passed it gets a fresh count.
func TestPerClientLockout(t *testing.T) {
	f := newFixture(t, "\n[gateway]\npairing_failure_budget = 1000\n", nil)
	code := f.m.PendingCode()
	wrong := "000000"
	if code == wrong {
		wrong = "000001"
	}
	for i := range MaxFailedAttempts {
		if _, err := f.m.Pair(t.Context(), "evil", wrong, DeviceInfo{}); !errors.Is(err, ErrInvalidCode) {
			t.Fatalf("wrong code %d: %v", i, err)
		}
	}
	var locked *LockedError
	if _, err := f.m.Pair(t.Context(), "evil", code, DeviceInfo{}); !errors.As(err, &locked) || locked.RetryAfter != LockoutDuration {
		t.Fatalf("the right code from a locked client: %v, want a lockout of %v", err, LockoutDuration)
	}
	if f.m.PendingCode() != code {
		t.Fatal("a locked client's attempt spent the code")
	}
	f.clk.Advance(LockoutDuration)
	if _, err := f.m.Pair(t.Context(), "evil", wrong, DeviceInfo{}); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("after the lockout: %v, want a fresh count (ErrInvalidCode)", err)
	}
	if _, err := f.m.Pair(t.Context(), "friend", code, DeviceInfo{}); err != nil {
		t.Fatalf("another client with the right code: %v", err)
	}
}

// Wrong codes from many clients (each under its own lockout) spend the global budget: the pending code is
// replaced (told through OnRotate only), pairing pauses for the window, and the old code no longer works.
func TestGlobalBudgetRotatesAndPauses(t *testing.T) {
	f := newFixture(t, "\n[gateway]\npairing_failure_budget = 6\npairing_failure_window_secs = 60\n", nil)
	old := f.m.PendingCode()
	var mu sync.Mutex
	var told []string
	f.m.OnRotate(func(code string, failures int, window time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, code)
		if failures != 6 || window != time.Minute {
			t.Errorf("rotated after %d failures in %v", failures, window)
		}
	})
	wrong := "999999"
	if old == wrong {
		wrong = "999998"
	}
	for i := range 6 {
		if _, err := f.m.Pair(t.Context(), "client-"+string(rune('a'+i)), wrong, DeviceInfo{}); !errors.Is(err, ErrInvalidCode) {
			t.Fatalf("spray %d: %v", i, err)
		}
	}
	mu.Lock()
	if len(told) != 1 || told[0] == old || told[0] != f.m.PendingCode() {
		t.Fatalf("rotation told %v, pending %q, old %q", told, f.m.PendingCode(), old)
	}
	fresh := told[0]
	mu.Unlock()
	var locked *LockedError
	if _, err := f.m.Pair(t.Context(), "owner", fresh, DeviceInfo{}); !errors.As(err, &locked) {
		t.Fatalf("pairing during the pause: %v, want a LockedError", err)
	}
	f.clk.Advance(time.Minute)
	if _, err := f.m.Pair(t.Context(), "owner", old, DeviceInfo{}); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("the replaced code after the pause: %v", err)
	}
	if _, err := f.m.Pair(t.Context(), "owner", fresh, DeviceInfo{}); err != nil {
		t.Fatalf("the new code after the pause: %v", err)
	}
}

// Codes come from the random source by rejection sampling (no modulo bias): values past the largest multiple
// of 10^6 below 2^32 are drawn again. A failing source leaves pairing failed, not a predictable code.
func TestCodeRejectionSampling(t *testing.T) {
	// 0xFFFFFFFF is past the bound and must be skipped; 0x0001E240 is 123456.
	src := bytes.NewReader([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x01, 0xE2, 0x40})
	f := newFixture(t, "", src)
	if got := f.m.PendingCode(); got != "123456" {
		t.Fatalf("code %q, want 123456 (the first draw rejected)", got)
	}
	// The source is now empty: the token cannot be drawn, and the code stays pending for a retry.
	if _, err := f.m.Pair(t.Context(), "c", "123456", DeviceInfo{}); err == nil || errors.Is(err, ErrInvalidCode) {
		t.Fatalf("pairing with an exhausted random source: %v, want a token error", err)
	}
	if f.m.PendingCode() != "123456" {
		t.Fatal("a failed pairing spent the code")
	}
}

// Revoke removes the device and its token (the token stops authenticating, other devices stay); Rotate revokes
// a device's token and hands back a code that pairs it again with the same permission profile.
func TestRevokeAndRotate(t *testing.T) {
	f := newFixture(t, "\n[permission_profiles.viewer]\ngrants = [\"status:read\"]\n", nil)
	p, err := f.m.Pair(t.Context(), "c", f.m.PendingCode(), DeviceInfo{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := f.m.CodeFor("viewer")
	if err != nil {
		t.Fatal(err)
	}
	q, err := f.m.Pair(t.Context(), "c", c2, DeviceInfo{Name: "tablet"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Profile(f.cfg.Current(), HashToken(q.Token)); got != "viewer" {
		t.Fatalf("tablet's profile %q, want viewer", got)
	}
	code, err := f.m.Rotate(t.Context(), q.Device.ID)
	if err != nil || !regexp.MustCompile(`^\d{6}$`).MatchString(code) {
		t.Fatalf("rotate: %q %v", code, err)
	}
	if _, ok := f.m.Authenticate(q.Token); ok {
		t.Fatal("a rotated device's old token still authenticates")
	}
	r, err := f.m.Pair(t.Context(), "c", code, DeviceInfo{Name: "tablet"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Profile(f.cfg.Current(), HashToken(r.Token)); got != "viewer" {
		t.Fatalf("re-paired tablet's profile %q, want viewer (kept across the rotation)", got)
	}
	if err := f.m.Revoke(t.Context(), p.Device.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.m.Authenticate(p.Token); ok {
		t.Fatal("a revoked token still authenticates")
	}
	if err := f.m.Revoke(t.Context(), "no-such-device"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoke of an unknown device: %v", err)
	}
	if _, ok := f.m.Authenticate(r.Token); !ok {
		t.Fatal("revoking one device logged out another")
	}
}

// With require_pairing off there is nothing to pair.
func TestPairingDisabled(t *testing.T) {
	f := newFixture(t, "\n[gateway]\nrequire_pairing = false\n", nil)
	if f.m.PendingCode() != "" {
		t.Fatal("a code is pending with pairing off")
	}
	if _, err := f.m.Pair(context.Background(), "c", "123456", DeviceInfo{}); !errors.Is(err, ErrDisabled) {
		t.Fatalf("pair with pairing off: %v", err)
	}
}

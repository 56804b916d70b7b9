package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Device is one devices row: what a paired gateway client told about itself. Times are UTC.
type Device struct {
	TokenHash    string
	ID           string
	Name         string
	DeviceType   string
	PairedAt     time.Time
	LastSeen     time.Time
	IPAddress    string
	Capabilities []string
}

// DeviceStore is data/devices.db. It holds metadata only: access is decided by the configured token hashes,
// against which Reconcile prunes it.
type DeviceStore struct{ db *db }

// OpenDevices opens (creating) the device registry at path.
func OpenDevices(ctx context.Context, path string) (*DeviceStore, error) {
	d, err := openDB(ctx, path, "devices", nil)
	if err != nil {
		return nil, err
	}
	return &DeviceStore{db: d}, nil
}

// Close closes the database.
func (s *DeviceStore) Close() error { return s.db.close() }

const deviceTime = time.RFC3339Nano

// Add inserts d, replacing a row with the same token hash.
func (s *DeviceStore) Add(ctx context.Context, d Device) error {
	if d.TokenHash == "" || d.ID == "" {
		return fmt.Errorf("store: add device: empty token hash or id: %w", ErrInvalid)
	}
	caps, err := json.Marshal(d.Capabilities)
	if err != nil {
		return fmt.Errorf("store: add device %s: %w", d.ID, err)
	}
	err = s.db.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO devices(token_hash, id, name, device_type, paired_at, last_seen, ip_address, capabilities)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, d.TokenHash, d.ID, nullText(d.Name), nullText(d.DeviceType),
			d.PairedAt.UTC().Format(deviceTime), d.LastSeen.UTC().Format(deviceTime), nullText(d.IPAddress), string(caps))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: add device %s: %w", d.ID, err)
	}
	return nil
}

// List returns every device, oldest pairing first.
func (s *DeviceStore) List(ctx context.Context) ([]Device, error) {
	rows, err := s.db.r.QueryContext(ctx, `SELECT token_hash, id, name, device_type, paired_at, last_seen, ip_address, capabilities
		FROM devices ORDER BY paired_at, id`)
	if err != nil {
		return nil, fmt.Errorf("store: list devices: %w", err)
	}
	defer rows.Close()
	var out []Device
	for rows.Next() {
		var d Device
		var name, typ, ip, caps sql.NullString
		var paired, seen string
		if err := rows.Scan(&d.TokenHash, &d.ID, &name, &typ, &paired, &seen, &ip, &caps); err != nil {
			return nil, fmt.Errorf("store: list devices: %w", err)
		}
		d.Name, d.DeviceType, d.IPAddress = name.String, typ.String, ip.String
		d.PairedAt, _ = time.Parse(deviceTime, paired)
		d.LastSeen, _ = time.Parse(deviceTime, seen)
		if caps.Valid && caps.String != "" {
			_ = json.Unmarshal([]byte(caps.String), &d.Capabilities) // metadata: a damaged list reads as none
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list devices: %w", err)
	}
	return out, nil
}

// Get returns the device with id, or ErrNotFound.
func (s *DeviceStore) Get(ctx context.Context, id string) (Device, error) {
	all, err := s.List(ctx)
	if err != nil {
		return Device{}, err
	}
	for _, d := range all {
		if d.ID == id {
			return d, nil
		}
	}
	return Device{}, fmt.Errorf("store: device %s: %w", id, ErrNotFound)
}

// Delete removes the device with id and returns its token hash, or ErrNotFound.
func (s *DeviceStore) Delete(ctx context.Context, id string) (string, error) {
	var hash string
	err := s.db.withTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT token_hash FROM devices WHERE id = ?`, id).Scan(&hash); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: delete device %s: %w", id, err)
	}
	return hash, nil
}

// Touch records that the device holding tokenHash was seen at t, from ip. An unknown hash is no error.
func (s *DeviceStore) Touch(ctx context.Context, tokenHash string, t time.Time, ip string) error {
	err := s.db.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE devices SET last_seen = ?, ip_address = COALESCE(?, ip_address) WHERE token_hash = ?`,
			t.UTC().Format(deviceTime), nullText(ip), tokenHash)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: touch device: %w", err)
	}
	return nil
}

// SetCapabilities replaces the capabilities of the device holding tokenHash; ErrNotFound when none does.
func (s *DeviceStore) SetCapabilities(ctx context.Context, tokenHash string, caps []string) error {
	b, err := json.Marshal(caps)
	if err != nil {
		return fmt.Errorf("store: device capabilities: %w", err)
	}
	err = s.db.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE devices SET capabilities = ? WHERE token_hash = ?`, string(b), tokenHash)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: device capabilities: %w", err)
	}
	return nil
}

// Reconcile deletes the devices whose token hash is not in keep (a token removed from the config by hand, or
// revoked elsewhere) and returns how many it removed.
func (s *DeviceStore) Reconcile(ctx context.Context, keep map[string]bool) (int, error) {
	all, err := s.List(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.db.withTx(ctx, func(tx *sql.Tx) error {
		for _, d := range all {
			if keep[d.TokenHash] {
				continue
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE token_hash = ?`, d.TokenHash); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: reconcile devices: %w", err)
	}
	return n, nil
}

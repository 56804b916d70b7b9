package lease

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Peer is a daemon seen on the database.
type Peer struct {
	Holder, Host, Version string
	PID                   int
	Started, Seen         time.Time
}

// Announce records this daemon as alive (call it every few seconds): status and doctor list the peers seen
// recently.
func (s *Store) Announce(ctx context.Context, version string) error {
	host, _ := os.Hostname()
	_, err := s.db.Exec(ctx, `INSERT INTO zc_peers (holder, host, pid, version, started_at, seen_at)
VALUES ($1, $2, $3, $4, now(), now())
ON CONFLICT (holder) DO UPDATE SET seen_at = now(), version = EXCLUDED.version`, s.holder, host, os.Getpid(), version)
	if err != nil {
		return fmt.Errorf("lease: announce: %w", err)
	}
	return nil
}

// Peers lists the daemons seen within the last d (this one included once it announced itself).
func (s *Store) Peers(ctx context.Context, within time.Duration) ([]Peer, error) {
	t, err := ms(within)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, `SELECT holder, host, version, pid, started_at, seen_at FROM zc_peers
WHERE seen_at >= now() - $1::bigint * interval '1 millisecond' ORDER BY started_at, holder`, t)
	if err != nil {
		return nil, fmt.Errorf("lease: peers: %w", err)
	}
	out := make([]Peer, 0, len(rows))
	for _, r := range rows {
		p := Peer{Holder: r.String(0), Host: r.String(1), Version: r.String(2)}
		pid, err := r.Int64(3)
		if err != nil {
			return nil, err
		}
		p.PID = int(pid)
		if p.Started, err = r.Time(4); err != nil {
			return nil, err
		}
		if p.Seen, err = r.Time(5); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

package pgdb_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
)

// A Listener gets what other connections NOTIFY on its channel, committed ones only, in order; a channel that
// is not an identifier is refused before anything is sent.
func TestListenNotify(t *testing.T) {
	p, _ := pgtest.Open(t)
	if p == nil {
		return
	}
	ctx := t.Context()
	if _, err := p.Listen(ctx, `x"; DROP TABLE t; --`); !errors.Is(err, pgdb.ErrInvalid) {
		t.Fatalf("a hostile channel name: %v", err)
	}
	l, err := p.Listen(ctx, "zc_test_chan")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rolled := errors.New("rolled back")
	_ = p.InTx(ctx, func(tx *pgdb.Tx) error {
		_, _ = tx.Exec(ctx, "SELECT pg_notify('zc_test_chan', 'never')")
		return rolled
	})
	if err := p.InTx(ctx, func(tx *pgdb.Tx) error {
		_, err := tx.Exec(ctx, "SELECT pg_notify('zc_test_chan', g::text) FROM generate_series(1, 50) g")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for i := 1; i <= 50; i++ {
		n, err := l.Wait(wctx)
		if err != nil || n.Channel != "zc_test_chan" || n.Payload != fmt.Sprint(i) {
			t.Fatalf("notification %d: %+v %v", i, n, err)
		}
	}
	// Nothing more is pending: the rolled-back one never came.
	short, cancel2 := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel2()
	if n, err := l.Wait(short); err == nil {
		t.Fatalf("an extra notification: %+v", n)
	}
}

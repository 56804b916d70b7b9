package doctor_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/doctor"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

func withBudget(t *testing.T, l install.Layout, n int64) {
	t.Helper()
	f, err := os.OpenFile(l.ConfigPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(f, "\n[storage]\nmax_disk_bytes = %d\n", n); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// doctor shows the data dir's size against [storage] max_disk_bytes: a note within it (or with no budget), a
// warning with a fix over it.
func TestDoctorShowsTheDiskBudget(t *testing.T) {
	t.Parallel()
	opts := func(l install.Layout) doctor.Options {
		return doctor.Options{Layout: l, Endpoint: l.SocketPath(), SkipProviders: true}
	}
	l := newInstall(t)
	res := doctor.Run(context.Background(), opts(l))
	if d := find(t, res, "disk-budget"); d.Severity == api.SeverityWarn || !strings.Contains(d.Message, "no budget") {
		t.Fatalf("no budget: %+v", d)
	}

	l = newInstall(t)
	withBudget(t, l, 1<<30)
	res = doctor.Run(context.Background(), opts(l))
	if d := find(t, res, "disk-budget"); !strings.Contains(d.Message, "of its 1024.0 MiB budget") {
		t.Fatalf("within the budget: %+v", d)
	}

	l = newInstall(t)
	withBudget(t, l, 1000) // the test install's sessions.db alone is larger
	res = doctor.Run(context.Background(), opts(l))
	d := find(t, res, "disk-over-budget")
	if d.Severity != api.SeverityWarn || d.Path != l.DataDir || !strings.Contains(d.Message, "over its 1000.0 KiB") && !strings.Contains(d.Message, "over its 1.0 KiB") ||
		!strings.Contains(d.Fix, "storage.max_disk_bytes") || !strings.Contains(d.Fix, "zeroclaw storage compact") {
		t.Fatalf("over the budget: %+v", d)
	}
}

package cron

import (
	"errors"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// occurrences returns the next n runs of sc after from, each computed from the previous one.
func occurrences(t *testing.T, s Schedules, sc api.CronSchedule, from time.Time, n int) []time.Time {
	t.Helper()
	var out []time.Time
	for range n {
		next, err := s.Next(sc, from)
		if err != nil {
			t.Fatalf("Next(%+v, %s): %v", sc, from, err)
		}
		out = append(out, next)
		from = next
	}
	return out
}

func TestScheduleExpressions(t *testing.T) {
	t.Parallel()
	ny := mustLoc(t, "America/New_York")
	cases := []struct {
		name  string
		sc    api.CronSchedule
		local *time.Location
		from  time.Time
		want  []string // in the zone the expression is evaluated in, "2006-01-02 15:04 MST"
		zone  *time.Location
	}{
		{name: "weekdays at 9 in New York", sc: api.CronSchedule{Kind: "cron", Expr: "0 9 * * 1-5", TZ: "America/New_York"},
			from: time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC), zone: ny, // Friday 10:00 EST
			want: []string{"2026-03-09 09:00 EDT", "2026-03-10 09:00 EDT", "2026-03-11 09:00 EDT"}},
		{name: "0 and 7 are Sunday", sc: api.CronSchedule{Kind: "cron", Expr: "0 9 * * 7,0", TZ: "America/New_York"},
			from: time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC), zone: ny,
			want: []string{"2026-03-08 09:00 EDT", "2026-03-15 09:00 EDT"}},
		{name: "wrapping range Friday to Sunday", sc: api.CronSchedule{Kind: "cron", Expr: "0 9 * * 5-0", TZ: "America/New_York"},
			from: time.Date(2026, 3, 5, 15, 0, 0, 0, time.UTC), zone: ny, // Thursday
			want: []string{"2026-03-06 09:00 EST", "2026-03-07 09:00 EST", "2026-03-08 09:00 EDT", "2026-03-13 09:00 EDT"}},
		{name: "stepped weekdays", sc: api.CronSchedule{Kind: "cron", Expr: "0 9 * * 1-5/2", TZ: "America/New_York"},
			from: time.Date(2026, 3, 8, 15, 0, 0, 0, time.UTC), zone: ny, // Sunday
			want: []string{"2026-03-09 09:00 EDT", "2026-03-11 09:00 EDT", "2026-03-13 09:00 EDT", "2026-03-16 09:00 EDT"}},
		{name: "names pass through", sc: api.CronSchedule{Kind: "cron", Expr: "0 9 * * MON-FRI", TZ: "America/New_York"},
			from: time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC), zone: ny,
			want: []string{"2026-03-09 09:00 EDT"}},
		{name: "six fields: seconds and the cron crate's weekdays (2-6 = Mon-Fri)", sc: api.CronSchedule{Kind: "cron", Expr: "30 0 9 * * 2-6", TZ: "America/New_York"},
			from: time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC), zone: ny,
			want: []string{"2026-03-09 09:00 EDT"}},
		{name: "seven fields: a year", sc: api.CronSchedule{Kind: "cron", Expr: "0 0 12 1 1 * 2030", TZ: "UTC"},
			from: time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC), zone: time.UTC,
			want: []string{"2030-01-01 12:00 UTC"}},
		{name: "DST ends: 01:30 happens twice, runs once", sc: api.CronSchedule{Kind: "cron", Expr: "30 1 * * *", TZ: "America/New_York"},
			from: time.Date(2026, 10, 31, 16, 0, 0, 0, time.UTC), zone: ny,
			want: []string{"2026-11-01 01:30 EDT", "2026-11-02 01:30 EST", "2026-11-03 01:30 EST"}},
		{name: "DST starts: 02:30 does not happen that day", sc: api.CronSchedule{Kind: "cron", Expr: "30 2 * * *", TZ: "America/New_York"},
			from: time.Date(2026, 3, 7, 17, 0, 0, 0, time.UTC), zone: ny,
			want: []string{"2026-03-09 02:30 EDT", "2026-03-10 02:30 EDT"}},
		{name: "every half hour keeps its pace through the repeated hour", sc: api.CronSchedule{Kind: "cron", Expr: "*/30 * * * *", TZ: "America/New_York"},
			from: time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC), zone: ny, // 01:00 EDT
			want: []string{"2026-11-01 01:30 EDT", "2026-11-01 01:00 EST", "2026-11-01 01:30 EST", "2026-11-01 02:00 EST"}},
		{name: "fixed hours at a repeated time, with minutes stepped", sc: api.CronSchedule{Kind: "cron", Expr: "0,30 1 * * *", TZ: "America/New_York"},
			from: time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC), zone: ny, // 00:00 EDT
			want: []string{"2026-11-01 01:00 EDT", "2026-11-01 01:30 EDT", "2026-11-02 01:00 EST"}},
		{name: "no tz: the host zone", sc: api.CronSchedule{Kind: "cron", Expr: "0 9 * * *"}, local: mustLoc(t, "Asia/Tokyo"),
			from: time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC), zone: mustLoc(t, "Asia/Tokyo"),
			want: []string{"2026-03-07 09:00 JST"}},
		{name: "another zone, another instant", sc: api.CronSchedule{Kind: "cron", Expr: "0 9 * * *", TZ: "Europe/London"},
			from: time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC), zone: mustLoc(t, "Europe/London"),
			want: []string{"2026-03-07 09:00 GMT"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := occurrences(t, Schedules{Local: c.local}, c.sc, c.from, len(c.want))
			for i, g := range got {
				if g.Location() != time.UTC {
					t.Errorf("occurrence %d not in UTC: %v", i, g)
				}
				if s := g.In(c.zone).Format("2006-01-02 15:04 MST"); s != c.want[i] {
					t.Errorf("occurrence %d = %s, want %s", i, s, c.want[i])
				}
			}
		})
	}
}

func TestScheduleAtAndEvery(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := Schedules{}
	at := api.CronSchedule{Kind: "at", At: "2026-05-01T14:00:00+02:00"}
	if err := s.Validate(at, now); err == nil || !errors.Is(err, ErrSchedule) {
		t.Fatalf("an at equal to now validated: %v", err)
	}
	at.At = "2026-05-01T14:20:00+02:00"
	if err := s.Validate(at, now); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Next(at, now); !n.Equal(now.Add(20 * time.Minute)) {
		t.Fatalf("at next = %v", n)
	}
	every := api.CronSchedule{Kind: "every", EveryMS: 90_000}
	if n, _ := s.Next(every, now); !n.Equal(now.Add(90 * time.Second)) {
		t.Fatalf("every next = %v", n)
	}
	for _, bad := range []api.CronSchedule{
		{Kind: "every"}, {Kind: "cron", Expr: "* * * *"}, {Kind: "cron", Expr: "0 9 * * 8"},
		{Kind: "cron", Expr: "0 9 * * *", TZ: "Mars/Olympus"}, {Kind: "cron", Expr: "0 0 0 1 1 * 2020"},
		{Kind: "at", At: "tomorrow"}, {Kind: "hourly"},
	} {
		if err := s.Validate(bad, now); !errors.Is(err, ErrSchedule) {
			t.Errorf("Validate(%+v) = %v, want ErrSchedule", bad, err)
		}
	}
}

func TestWireTime(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	for d, want := range map[time.Duration]string{
		0: "2026-05-01T11:00:00Z", 5 * time.Millisecond: "2026-05-01T11:00:00.005Z",
		5 * time.Microsecond: "2026-05-01T11:00:00.000005Z", 5: "2026-05-01T11:00:00.000000005Z",
	} {
		if got := wireTime(base.Add(d)); got != want {
			t.Errorf("wireTime(+%v) = %s, want %s", d, got, want)
		}
	}
}

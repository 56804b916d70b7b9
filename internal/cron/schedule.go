package cron

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones for schedules' tz even where the host has no zoneinfo

	robfig "github.com/robfig/cron/v3"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// ErrSchedule reports a schedule that cannot be used: a bad expression, time zone or interval, an `at` in the
// past, or an expression with no future occurrence.
var ErrSchedule = errors.New("cron: invalid schedule")

// The expression dialect is upstream's (cron-logs-costs.md §A3): 5 crontab fields (minute hour day month
// weekday, weekday 0 or 7 = Sunday), or 6-7 fields of the Rust `cron` crate (seconds first, optional year,
// weekday 1 = Sunday … 7 = Saturday). Both are translated to robfig/cron's 6-field form (weekday 0 = Sunday);
// the year field is applied here.
var parser = robfig.NewParser(robfig.Second | robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow)

// expression is a parsed cron expression.
type expression struct {
	spec  robfig.Schedule
	years func(int) bool // nil: every year
	// wildHour is set when the hour field is "*" or "*/n": such a job keeps its pace through a repeated hour.
	wildHour bool
}

func parseExpression(expr string) (*expression, error) {
	fields := strings.Fields(expr)
	var (
		six   []string
		years func(int) bool
		err   error
	)
	switch len(fields) {
	case 5:
		dow, err := translateWeekdays(fields[4], 0, 7, func(v int) int { return v % 7 })
		if err != nil {
			return nil, err
		}
		six = []string{"0", fields[0], fields[1], fields[2], fields[3], dow}
	case 6, 7:
		dow, err := translateWeekdays(fields[5], 1, 7, func(v int) int { return v - 1 })
		if err != nil {
			return nil, err
		}
		six = append(slices.Clone(fields[:5]), dow)
		if len(fields) == 7 {
			if years, err = parseYears(fields[6]); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%w: cron expression %q: expected 5, 6 or 7 fields, got %d", ErrSchedule, expr, len(fields))
	}
	spec, err := parser.Parse(strings.Join(six, " "))
	if err != nil {
		return nil, fmt.Errorf("%w: cron expression %q: %v", ErrSchedule, expr, err)
	}
	return &expression{spec: spec, years: years, wildHour: strings.HasPrefix(six[2], "*")}, nil
}

// translateWeekdays rewrites a weekday field from a numbering whose values run lo..hi into robfig's (0 =
// Sunday … 6 = Saturday) with toRobfig. Ranges may wrap around the week ("5-0" = Friday to Sunday); steps are
// applied over the range's days; names (MON-FRI) and "*"/"?" pass through.
func translateWeekdays(field string, lo, hi int, toRobfig func(int) int) (string, error) {
	if field == "*" || field == "?" {
		return field, nil
	}
	var out []int
	for _, item := range strings.Split(field, ",") {
		if strings.IndexFunc(item, func(r rune) bool { return r >= 'A' && r <= 'z' }) >= 0 {
			return field, nil // names: robfig reads them itself (a field mixing names and numbers is left whole)
		}
		base, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				return "", fmt.Errorf("%w: weekday step %q", ErrSchedule, item)
			}
			step = n
		}
		var from, to int
		switch {
		case base == "*" || base == "?":
			from, to = lo, hi
			if lo == 0 {
				to = 6 // 7 repeats Sunday
			}
		case strings.Contains(base, "-"):
			a, b, _ := strings.Cut(base, "-")
			var err error
			if from, err = weekday(a, lo, hi); err != nil {
				return "", err
			}
			if to, err = weekday(b, lo, hi); err != nil {
				return "", err
			}
		default:
			v, err := weekday(base, lo, hi)
			if err != nil {
				return "", err
			}
			from, to = v, v
			if hasStep {
				to = hi
			}
		}
		span := hi - lo + 1
		for i, d := 0, from; ; i++ {
			if i%step == 0 {
				out = append(out, toRobfig(d))
			}
			if d == to || i > span {
				break
			}
			if d++; d > hi {
				d = lo
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	parts := make([]string, len(out))
	for i, v := range out {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ","), nil
}

func weekday(s string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%w: weekday %q: expected %d-%d", ErrSchedule, s, lo, hi)
	}
	return v, nil
}

// parseYears reads a year field (*, 2027, 2026-2030, 2026/2, lists) into a predicate.
func parseYears(field string) (func(int) bool, error) {
	if field == "*" || field == "?" {
		return nil, nil
	}
	type span struct{ from, to, step int }
	var spans []span
	for _, item := range strings.Split(field, ",") {
		base, stepText, hasStep := strings.Cut(item, "/")
		sp := span{from: 1970, to: 2099, step: 1}
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("%w: year step %q", ErrSchedule, item)
			}
			sp.step = n
		}
		if base != "*" {
			a, b, isRange := strings.Cut(base, "-")
			from, err := strconv.Atoi(a)
			if err != nil || from < 1970 || from > 2099 {
				return nil, fmt.Errorf("%w: year %q: expected 1970-2099", ErrSchedule, item)
			}
			sp.from, sp.to = from, from
			if hasStep {
				sp.to = 2099
			}
			if isRange {
				if sp.to, err = strconv.Atoi(b); err != nil || sp.to < from || sp.to > 2099 {
					return nil, fmt.Errorf("%w: year range %q", ErrSchedule, item)
				}
			}
		}
		spans = append(spans, sp)
	}
	return func(y int) bool {
		for _, s := range spans {
			if y >= s.from && y <= s.to && (y-s.from)%s.step == 0 {
				return true
			}
		}
		return false
	}, nil
}

// next returns the first occurrence strictly after from, evaluated in loc. When daylight saving time ends, a job
// at fixed hours runs once at a wall-clock time that occurs twice (the first time), while a job whose hour is
// "*" or "*/n" keeps its pace through both hours; a time skipped when DST starts does not occur that day.
func (e *expression) next(from time.Time, loc *time.Location) (time.Time, bool) {
	t := from.In(loc)
	for range 10_000 {
		n := e.spec.Next(t)
		if n.IsZero() {
			return time.Time{}, false
		}
		if e.years != nil && !e.years(n.Year()) {
			y := n.Year() + 1
			for y <= 2099 && !e.years(y) {
				y++
			}
			if y > 2099 {
				return time.Time{}, false
			}
			t = time.Date(y, 1, 1, 0, 0, 0, 0, loc).Add(-time.Second)
			continue
		}
		if !e.wildHour && repeatedWallClock(n) {
			t = n
			continue
		}
		return n.UTC(), true
	}
	return time.Time{}, false
}

// repeatedWallClock reports whether t's wall-clock reading already occurred earlier (a DST fall-back).
func repeatedWallClock(t time.Time) bool {
	for _, d := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		p := t.Add(-d)
		if p.Hour() == t.Hour() && p.Minute() == t.Minute() && p.Second() == t.Second() && p.YearDay() == t.YearDay() {
			return true
		}
	}
	return false
}

// Schedules evaluates schedules; Local is the zone of cron schedules without a tz (the host's in production).
type Schedules struct {
	Local *time.Location
}

func (s Schedules) location(tz string) (*time.Location, error) {
	if tz == "" {
		if s.Local != nil {
			return s.Local, nil
		}
		return time.Local, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("%w: time zone %q: not an IANA zone name", ErrSchedule, tz)
	}
	return loc, nil
}

// Next returns the schedule's next run after from (upstream's next_run_for_schedule): the next occurrence of a
// cron expression, the `at` time itself, or from + every_ms.
func (s Schedules) Next(sc api.CronSchedule, from time.Time) (time.Time, error) {
	switch sc.Kind {
	case api.ScheduleCron:
		e, err := parseExpression(sc.Expr)
		if err != nil {
			return time.Time{}, err
		}
		loc, err := s.location(sc.TZ)
		if err != nil {
			return time.Time{}, err
		}
		n, ok := e.next(from, loc)
		if !ok {
			return time.Time{}, fmt.Errorf("%w: no future occurrence for expression %q", ErrSchedule, sc.Expr)
		}
		return n, nil
	case api.ScheduleAt:
		return parseAt(sc.At)
	case api.ScheduleEvery:
		if sc.EveryMS <= 0 {
			return time.Time{}, fmt.Errorf("%w: every_ms must be > 0", ErrSchedule)
		}
		return from.Add(time.Duration(sc.EveryMS) * time.Millisecond).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%w: kind %q: want cron, at or every", ErrSchedule, sc.Kind)
}

// Validate checks a schedule for a new or changed job at now: the expression and zone parse and have a future
// occurrence, an `at` is in the future, every_ms is positive.
func (s Schedules) Validate(sc api.CronSchedule, now time.Time) error {
	if sc.Kind == api.ScheduleAt {
		at, err := parseAt(sc.At)
		if err != nil {
			return err
		}
		if !at.After(now) {
			return fmt.Errorf("%w: 'at' must be in the future (now %s, at %s)", ErrSchedule, wireTime(now), wireTime(at))
		}
		return nil
	}
	_, err := s.Next(sc, now)
	return err
}

func parseAt(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: at %q: expected an RFC 3339 time", ErrSchedule, s)
	}
	return t.UTC(), nil
}

// wireTime formats t as upstream's JSON does (chrono's serde form): UTC, a fraction of 0, 3, 6 or 9 digits,
// and "Z".
func wireTime(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
	case ns%1_000_000 == 0:
		s += fmt.Sprintf(".%03d", ns/1_000_000)
	case ns%1_000 == 0:
		s += fmt.Sprintf(".%06d", ns/1_000)
	default:
		s += fmt.Sprintf(".%09d", ns)
	}
	return s + "Z"
}

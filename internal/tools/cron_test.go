package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// Schedule arguments as models send them: objects, objects inside strings, and the relative "after" form
// resolved against the turn's clock; a bare expression and an "at" without an offset are refused with a hint.
func TestCronScheduleArgument(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		raw  string
		want api.CronSchedule
		err  string
	}{
		{`{"kind":"after","after_seconds":600}`, api.CronSchedule{Kind: "at", At: "2026-06-01T08:10:00Z"}, ""},
		{`"{\"kind\":\"every\",\"every_ms\":60000}"`, api.CronSchedule{Kind: "every", EveryMS: 60000}, ""},
		{`{"kind":"cron","expr":"0 9 * * 1-5","tz":"Europe/Paris"}`, api.CronSchedule{Kind: "cron", Expr: "0 9 * * 1-5", TZ: "Europe/Paris"}, ""},
		{`"*/5 * * * *"`, api.CronSchedule{}, `expected a JSON object with a "kind" field, got plain string "*/5 * * * *"`},
		{`{"kind":"at","at":"2026-06-01T09:00:00"}`, api.CronSchedule{}, "explicit offset"},
		{`{"kind":"after","after_seconds":0}`, api.CronSchedule{}, "after_seconds must be > 0"},
		{`{"kind":"after"}`, api.CronSchedule{}, "after_seconds must be an integer > 0"},
		{`{"kind":"weekly"}`, api.CronSchedule{}, `kind "weekly"`},
		{``, api.CronSchedule{}, "Missing 'schedule' parameter"},
	} {
		got, err := cronSchedule(json.RawMessage(tc.raw), now, true)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.raw, got, err, tc.want)
		}
	}
	if _, err := cronSchedule(json.RawMessage(`{"kind":"after","after_seconds":60}`), now, false); err == nil {
		t.Error("cron_update accepted an after schedule")
	}
}

// Without a scheduler the cron tools are not offered, and a call says why rather than failing obscurely.
func TestCronToolsNeedAScheduler(t *testing.T) {
	t.Parallel()
	for _, s := range SpecsFor(Env{}) {
		if isCronTool(s.Name) {
			t.Fatalf("%s offered without a scheduler", s.Name)
		}
	}
	r := Execute(t.Context(), Env{Policy: Policy{Level: LevelFull}}, call(NameCronList, nil))
	if !r.IsError || !strings.Contains(r.Output, "not available") {
		t.Fatalf("cron_list without a scheduler: %+v", r)
	}
}

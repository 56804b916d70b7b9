package rpctest

import (
	"os"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// A job's turns run in its session_target with the scheduler's authority, so a plain user may aim a job only
// at "isolated", "main" or a session it owns: never at the operator's session (whose history the job's turns
// would read and write), nor at an id no session has yet (another owner could create it later).
func TestCronTargetMustBeTheCallersSession(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig("", "echo.default", "full", echoTOML)))
	op := dialRC(t, d, "")
	opSession := op.newSession(api.SessionNewParams{})

	op.mustCall(api.MethodConfigSetMany, map[string]any{"sets": []map[string]any{
		{"prop": "permission_profiles.chat.grants", "value": []string{"sessions:create", "sessions:execute", "sessions:read", "cron:create", "cron:read", "config:update:users.other.uid"}},
		{"prop": "users.other.uid", "value": os.Getuid()},
		{"prop": "users.other.permission_profiles", "value": []string{"chat"}},
	}}, nil)
	other := dialRC(t, d, "")
	mine := other.newSession(api.SessionNewParams{})

	for _, target := range []string{opSession.SessionID, "not-created-yet"} {
		_, werr := other.call(api.MethodCronAdd, map[string]any{"agent": "a", "schedule": "0 9 * * *", "prompt": "read it", "session_target": target})
		if werr == nil {
			t.Fatalf("cron/add aimed at %q by another user succeeded", target)
		}
		if target == opSession.SessionID && werr.Code != api.CodeSessionNotOwned {
			t.Errorf("cron/add aimed at the operator's session: %+v, want %d", werr, api.CodeSessionNotOwned)
		}
		if target != opSession.SessionID && (werr.Code != api.CodeForbidden || !strings.Contains(werr.Message, "no session of other")) {
			t.Errorf("cron/add aimed at an unknown session: %+v, want -32012 saying no session of other has that id", werr)
		}
	}
	var list api.CronListResult
	other.mustCall(api.MethodCronList, struct{}{}, &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("refused cron/add calls left jobs: %+v", list.Jobs)
	}

	// Its own session, and the two shared targets, are fine.
	for _, target := range []string{mine.SessionID, "isolated", "main"} {
		var job api.CronJob
		other.mustCall(api.MethodCronAdd, map[string]any{"agent": "a", "schedule": "0 9 * * *", "prompt": "hi", "session_target": target}, &job)
		if job.SessionTarget != target {
			t.Errorf("cron/add aimed at %q: job %+v", target, job)
		}
	}

	// The operator is not restricted (it may aim at any session).
	other.mustCall(api.MethodConfigSet, map[string]any{"prop": "users.other.uid", "value": os.Getuid() + 100000}, nil)
	var job api.CronJob
	op.mustCall(api.MethodCronAdd, map[string]any{"agent": "a", "schedule": "0 9 * * *", "prompt": "hi", "session_target": mine.SessionID}, &job)
}

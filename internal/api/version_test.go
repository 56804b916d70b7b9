package api

import "testing"

// The build reports its own version, never the upstream release it speaks the protocol of.
func TestBuildVersion(t *testing.T) {
	t.Parallel()
	if got := BuildVersion(); got == "" || got == ServerVersion {
		t.Fatalf("BuildVersion() = %q", got)
	}
	defer func(old string) { stamped = old }(stamped)
	stamped = "v9.9.9"
	if got := BuildVersion(); got != "v9.9.9" {
		t.Fatalf("stamped BuildVersion() = %q", got)
	}
}

func TestStopReason(t *testing.T) {
	t.Parallel()
	for outcome, want := range map[string]string{OutcomeCompleted: StopEndTurn, OutcomeCancelled: StopCancelled, OutcomeFailed: StopError} {
		if got := StopReason(outcome); got != want {
			t.Errorf("StopReason(%s) = %s, want %s", outcome, got, want)
		}
	}
}

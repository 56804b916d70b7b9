package config

import (
	"errors"
	"strings"
	"testing"
)

// [limits] has working defaults, takes values from the file, and rejects values out of range, naming the key.
func TestLimitsSection(t *testing.T) {
	cfg, _, err := Load(writeConfig(t, string(DefaultTOML())), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits != (LimitsConfig{MaxAnswerBytes: 1 << 20, MaxToolArgsBytes: 256 << 10, MaxToolCalls: 32, MaxToolRounds: 16}) {
		t.Fatalf("default limits %+v", cfg.Limits)
	}
	cfg, _, err = Load(writeConfig(t, string(DefaultTOML())+"\n[limits]\nmax_answer_bytes = 65536\nmax_tool_rounds = 3\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits.MaxAnswerBytes != 65536 || cfg.Limits.MaxToolRounds != 3 || cfg.Limits.MaxToolCalls != 32 {
		t.Fatalf("limits %+v", cfg.Limits)
	}
	_, _, err = Load(writeConfig(t, string(DefaultTOML())+"\n[limits]\nmax_answer_bytes = 0\nmax_tool_args_bytes = 2097152\nmax_tool_calls = -1\n"), nil)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 3 {
		t.Fatalf("err = %v, want three problems", err)
	}
	for _, want := range []string{"limits.max_answer_bytes: must be between 1 and 4194304, got 0",
		"limits.max_tool_args_bytes: must be between 1 and 1048576, got 2097152", "limits.max_tool_calls"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

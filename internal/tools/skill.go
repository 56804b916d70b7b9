package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// NameReadSkill is the tool that loads a skill's instructions in compact skill mode (upstream's read_skill).
const NameReadSkill = "read_skill"

func buildReadSkillSpec() Spec {
	return Spec{
		Name:        NameReadSkill,
		Description: "Load the full SKILL.md of one of the available skills listed in the system prompt, by its name.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The skill's <name> as listed under Available Skills."}},"required":["name"],"additionalProperties":false}`),
	}
}

// readSkillName decodes and checks read_skill's arguments.
func readSkillName(call Call) (string, error) {
	var a struct {
		Name *string `json:"name"`
	}
	if err := decodeArgs(call.Arguments, &a); err != nil {
		return "", fmt.Errorf("%s: %w", NameReadSkill, err)
	}
	name, err := required(a.Name, "name")
	if err != nil {
		return "", fmt.Errorf("%s: %w", NameReadSkill, err)
	}
	if strings.TrimSpace(name) == "" {
		return "", fmt.Errorf("%s: %w: empty name", NameReadSkill, errBadArguments)
	}
	return name, nil
}

// readSkill runs read_skill through env.ReadSkill; its output is capped like file_read's.
func readSkill(env Env, call Call) Result {
	name, err := readSkillName(call)
	if err != nil {
		return errorf("%v", err)
	}
	if env.ReadSkill == nil {
		return errorf("%s: no skills are loaded for this turn", NameReadSkill)
	}
	text, err := env.ReadSkill(name)
	if err != nil {
		return errorf("%s: %v", NameReadSkill, err)
	}
	if limit := env.outputCap(); len(text) > limit {
		return Result{Output: text[:limit] + fmt.Sprintf("\n[truncated: %d more bytes]", len(text)-limit)}
	}
	return Result{Output: text}
}

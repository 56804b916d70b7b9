package heartbeat

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Priority is a task's priority; the zero value is not one (a parsed task always has one).
type Priority string

// Priorities, upstream's spelling.
const (
	High   Priority = "high"
	Medium Priority = "medium"
	Low    Priority = "low"
)

func (p Priority) rank() int {
	switch p {
	case High:
		return 0
	case Low:
		return 2
	}
	return 1
}

// Status is a task's status.
type Status string

// Statuses, upstream's spelling.
const (
	Active    Status = "active"
	Paused    Status = "paused"
	Completed Status = "completed"
)

// Task is one "- " line of HEARTBEAT.md.
type Task struct {
	Text     string
	Priority Priority
	Status   Status
}

// DefaultFile is what a missing HEARTBEAT.md is created with (upstream's engine default): comments only, so no
// task and no model call until the owner writes one.
const DefaultFile = "# Periodic Tasks\n\n" +
	"# Add tasks below (one per line, starting with `- `)\n" +
	"# The agent will check this file on each heartbeat tick.\n" +
	"#\n" +
	"# Format: - [priority|status] Task description\n" +
	"#   priority: high, medium (default), low\n" +
	"#   status:   active (default), paused, completed\n" +
	"#\n" +
	"# Examples:\n" +
	"# - [high] Check my email for important messages\n" +
	"# - Review my calendar for upcoming events\n" +
	"# - [low|paused] Check the weather forecast\n"

// ParseTasks reads every task of a HEARTBEAT.md, in file order, as upstream's parse_tasks does: a line that,
// trimmed, starts with "- " and has text after it. "[meta] text" sets priority and status from meta's
// "|"-separated tokens (case-insensitive, unknown ones ignored, the last of a kind wins) when text is not
// empty; otherwise the whole text, brackets kept, is the task. Headings and prose are ignored.
func ParseTasks(content string) []Task {
	var out []Task
	for line := range strings.Lines(content) {
		text, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
		if !ok || text == "" {
			continue
		}
		out = append(out, parseTaskLine(text))
	}
	return out
}

func parseTaskLine(text string) Task {
	if rest, ok := strings.CutPrefix(text, "["); ok {
		if meta, task, ok := strings.Cut(rest, "]"); ok {
			if task = strings.TrimSpace(task); task != "" {
				t := Task{Text: task, Priority: Medium, Status: Active}
				for part := range strings.SplitSeq(meta, "|") {
					switch strings.ToLower(strings.TrimSpace(part)) {
					case "high":
						t.Priority = High
					case "medium", "med":
						t.Priority = Medium
					case "low":
						t.Priority = Low
					case "active":
						t.Status = Active
					case "paused", "pause":
						t.Status = Paused
					case "completed", "complete", "done":
						t.Status = Completed
					}
				}
				return t
			}
		}
	}
	return Task{Text: text, Priority: Medium, Status: Active}
}

// Runnable returns the active tasks, high before medium before low, file order kept within a priority.
func Runnable(tasks []Task) []Task {
	var out []Task
	for _, t := range tasks {
		if t.Status == Active {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b Task) int { return a.Priority.rank() - b.Priority.rank() })
	return out
}

// DecisionPrompt is phase 1's prompt (upstream's build_decision_prompt, with the "[Heartbeat Task | decision] "
// prefix the worker adds), at now.
func DecisionPrompt(tasks []Task, now time.Time) string {
	now = now.UTC()
	var b strings.Builder
	fmt.Fprintf(&b, "[Heartbeat Task | decision] You are a heartbeat scheduler. Review the following periodic tasks and decide "+
		"whether any should be executed right now.\n\nCurrent time: %s UTC (%s)\n\nConsider:\n"+
		"- Task priority (high tasks are more urgent)\n- Whether the task is time-sensitive or can wait\n"+
		"- Whether running the task now would provide value\n\nTasks:\n", now.Format(time.DateTime), now.Weekday())
	for i, t := range tasks {
		fmt.Fprintf(&b, "%d. [%s] %s\n", i+1, t.Priority, t.Text)
	}
	b.WriteString("\nRespond with ONLY one of:\n- `run: 1,2,3` (comma-separated task numbers to execute)\n" +
		"- `skip` (nothing needs to run right now)\n\nBe conservative — skip if tasks are routine and not time-sensitive.")
	return b.String()
}

// ParseDecision reads phase 1's answer as upstream does ("skip...", "run: 1,3", "run 2", or bare "1,2") and
// returns the chosen 0-based indices below n. Unlike upstream, a number named twice runs once.
func ParseDecision(answer string, n int) []int {
	s := strings.ToLower(strings.TrimSpace(answer))
	if strings.HasPrefix(s, "skip") {
		return nil
	}
	if rest, ok := strings.CutPrefix(s, "run:"); ok {
		s = strings.TrimSpace(rest)
	} else if rest, ok := strings.CutPrefix(s, "run "); ok {
		s = strings.TrimSpace(rest)
	}
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(part), "+"), 10, 64)
		if err != nil || v < 1 || v > uint64(n) || slices.Contains(out, int(v-1)) {
			continue
		}
		out = append(out, int(v-1))
	}
	return out
}

// TaskPrompt is phase 2's prompt for one task (upstream's "[Heartbeat Task | <priority>] <text>").
func TaskPrompt(t Task) string { return fmt.Sprintf("[Heartbeat Task | %s] %s", t.Priority, t.Text) }

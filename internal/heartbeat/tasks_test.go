package heartbeat

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseTasksUpstreamGrammar(t *testing.T) {
	content := "# Tasks\n\n- Check email\n  - [high] Page on-call if the queue is stuck  \n- [low|paused] Weather\n" +
		"- [DONE] Old thing\n- [bogus|LOW] Cleanup\n- [high]\n-\n-text\n* star\n1. numbered\n# - commented\n" +
		"- [high|low|pause|active] Last wins\nNot a task\n- [unclosed bracket\n"
	got := ParseTasks(content)
	want := []Task{
		{"Check email", Medium, Active},
		{"Page on-call if the queue is stuck", High, Active},
		{"Weather", Low, Paused},
		{"Old thing", Medium, Completed},
		{"Cleanup", Low, Active},
		{"[high]", Medium, Active}, // nothing after the bracket: the whole text is the task
		{"Last wins", Low, Active},
		{"[unclosed bracket", Medium, Active},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseTasks =\n%+v\nwant\n%+v", got, want)
	}
	run := Runnable(got)
	var texts []string
	for _, r := range run {
		texts = append(texts, r.Text)
	}
	if w := []string{"Page on-call if the queue is stuck", "Check email", "[high]", "[unclosed bracket", "Cleanup", "Last wins"}; !reflect.DeepEqual(texts, w) {
		t.Fatalf("Runnable = %q, want %q", texts, w)
	}
	if n := len(ParseTasks(DefaultFile)); n != 0 {
		t.Fatalf("the default file has %d tasks, want none", n)
	}
}

func TestDecisionPromptAndParse(t *testing.T) {
	tasks := []Task{{"a", High, Active}, {"b", Medium, Active}, {"c", Low, Active}}
	p := DecisionPrompt(tasks, time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	for _, want := range []string{"[Heartbeat Task | decision] You are a heartbeat scheduler.", "Current time: 2026-03-04 05:06:07 UTC (Wednesday)",
		"Tasks:\n1. [high] a\n2. [medium] b\n3. [low] c\n", "- `skip` (nothing needs to run right now)"} {
		if !strings.Contains(p, want) {
			t.Errorf("decision prompt lacks %q:\n%s", want, p)
		}
	}
	for in, want := range map[string][]int{
		"skip": nil, "SKIP — nothing": nil, "run: 1,3": {0, 2}, "Run 2": {1}, "2, 3": {1, 2}, "run: 0,4,-1,x,2": {1},
		"run: 1,1,1": {0}, "run: +3": {2}, "": nil, "run: 99999999999999999999999": nil,
	} {
		if got := ParseDecision(in, 3); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseDecision(%q) = %v, want %v", in, got, want)
		}
	}
	if got := TaskPrompt(Task{"x", Low, Active}); got != "[Heartbeat Task | low] x" {
		t.Fatalf("TaskPrompt = %q", got)
	}
}

// FuzzParseTasks: any file parses without panic; every task came from one "- " line, has a known priority
// and status and non-empty text; ParseDecision only names tasks that exist, each once.
func FuzzParseTasks(f *testing.F) {
	for _, s := range []string{DefaultFile, "- [high|done] x\n- y", "- [", "- []", "- [|||] z", "\xff- \xfe", "-\t[low] a"} {
		f.Add(s, "run: 1,2")
	}
	f.Fuzz(func(t *testing.T, content, answer string) {
		tasks := ParseTasks(content)
		lines := 0
		for l := range strings.Lines(content) {
			if s, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok && s != "" {
				lines++
			}
		}
		if len(tasks) != lines {
			t.Fatalf("%d tasks from %d task lines", len(tasks), lines)
		}
		for _, tk := range tasks {
			if tk.Text == "" || strings.Contains(tk.Text, "\n") {
				t.Fatalf("bad task text %q", tk.Text)
			}
			if tk.Priority != High && tk.Priority != Medium && tk.Priority != Low {
				t.Fatalf("priority %q", tk.Priority)
			}
			if tk.Status != Active && tk.Status != Paused && tk.Status != Completed {
				t.Fatalf("status %q", tk.Status)
			}
		}
		run := Runnable(tasks)
		seen := map[int]bool{}
		for _, i := range ParseDecision(answer, len(run)) {
			if i < 0 || i >= len(run) || seen[i] {
				t.Fatalf("decision index %d of %d (seen %v)", i, len(run), seen)
			}
			seen[i] = true
		}
	})
}

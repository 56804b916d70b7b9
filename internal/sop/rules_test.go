package sop

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEvalCondition(t *testing.T) {
	p := func(s string) *string { return &s }
	for _, c := range []struct {
		cond    string
		payload *string
		want    bool
	}{
		{"", nil, true},
		{"  ", p("x"), true},
		{"$.value > 85", p(`{"value": 90}`), true},
		{"$.value > 85", p(`{"value": 80}`), false},
		{"$.value >= 85", p(`{"value": 85}`), true},
		{"$.value <= 85", p(`{"value": 85.0}`), true},
		{"$.value == 85", p(`{"value": "85"}`), true}, // numeric string compares as a number
		{"$.a.b.0 == x", p(`{"a":{"b":["x"]}}`), true},
		{`$.sev == "critical"`, p(`{"sev":"critical"}`), true},
		{`$.sev != "critical"`, p(`{"sev":"low"}`), true},
		{"$.ok == true", p(`{"ok":true}`), true},
		{"$.n == ", p(`{"n":1}`), false},          // no operand: closed
		{"$.missing > 1", p(`{"n":1}`), false},    // unresolved path: closed
		{"$.n > 1", p(`not json`), false},         // bad payload: closed
		{"$.n > 1", nil, false},                   // no payload: closed
		{"$.n > 1", p(""), false},                 // empty payload: closed
		{"$.a.5 == x", p(`{"a":["x"]}`), false},   // index out of range
		{"> 0", p("3"), true},                     // direct form
		{"> 0", p(" -3 "), false},                 //
		{"== 2", p("2.0"), true},                  //
		{"> x", p("3"), false},                    // non-numeric operand: closed
		{"> 1", p("abc"), false},                  //
		{"what", p("1"), false},                   // no operator
		{"$.s > b", p(`{"s":"c"}`), true},         // string ordering
		{"$.n > 1", p(`{"n":1} trailing`), false}, // not one JSON value
		{"$.x == ", p(`{"x":""}`), false},         // empty literal is invalid
		{"$ > 1", p(`{"n":1}`), false},            // no path segments
		{"$.n != 1", p(`{"n":null}`), true},       // null is "" as a string
		{"$.o == {}", p(`{"o":{}}`), true},        // objects compare as their JSON
		{"$.v < 1e3", p(`{"v": 999}`), true},      // exponents
		{"$.v > 1e308", p(`{"v": "inf"}`), true},  // Rust parses inf
		{"$.v <= 0x10", p(`{"v": 16}`), false},    // no hex (Rust has none): the string "16" > "0x10"
	} {
		if got := EvalCondition(c.cond, c.payload); got != c.want {
			pl := "<nil>"
			if c.payload != nil {
				pl = *c.payload
			}
			t.Errorf("EvalCondition(%q, %q) = %v, want %v", c.cond, pl, got, c.want)
		}
	}
}

func TestMatch(t *testing.T) {
	p := func(s string) *string { return &s }
	cond := "$.value > 85"
	mqtt := Trigger{Type: SourceMQTT, Topic: "alerts/+/cpu", Condition: &cond}
	fs := Trigger{Type: SourceFilesystem, Path: "/data/in", Events: []FSEvent{FSCreated}}
	glob := Trigger{Type: SourceFilesystem, Path: "/data/**/*.csv"}
	alias := "ops"
	for i, c := range []struct {
		t       Trigger
		src     Source
		topic   *string
		payload *string
		want    bool
	}{
		{mqtt, SourceMQTT, p("alerts/host1/cpu"), p(`{"value":90}`), true},
		{mqtt, SourceMQTT, p("alerts/host1/cpu"), p(`{"value":10}`), false},
		{mqtt, SourceMQTT, p("alerts/host1/mem"), p(`{"value":90}`), false},
		{mqtt, SourceMQTT, p("alerts/a/b/cpu"), p(`{"value":90}`), false},
		{mqtt, SourceWebhook, p("alerts/host1/cpu"), p(`{"value":90}`), false}, // wrong source
		{mqtt, SourceMQTT, nil, p(`{"value":90}`), false},
		{Trigger{Type: SourceMQTT, Topic: "a/#"}, SourceMQTT, p("a/b/c"), nil, true},
		{Trigger{Type: SourceMQTT, Topic: "a/#"}, SourceMQTT, p("b/c"), nil, false},
		{Trigger{Type: SourceMQTT, Topic: "#"}, SourceMQTT, p("x"), nil, true},
		{fs, SourceFilesystem, p("/data/in/x.txt"), p(`{"event":"created"}`), true},
		{fs, SourceFilesystem, p("/data/in/x.txt"), p(`{"event":"deleted"}`), false},
		{fs, SourceFilesystem, p("/data/inbox/x.txt"), p(`{"event":"created"}`), false}, // prefix needs a /
		{fs, SourceFilesystem, p("/data/in"), p(`{"event":"created"}`), true},
		{fs, SourceFilesystem, p("/data/in/x"), nil, false}, // events listed, no payload
		{glob, SourceFilesystem, p("/data/a/b/x.csv"), nil, true},
		{glob, SourceFilesystem, p("/data/a/b/x.txt"), nil, false},
		{Trigger{Type: SourceFilesystem, Path: "/d/file?.[ab]"}, SourceFilesystem, p("/d/file1.a"), nil, true},
		{Trigger{Type: SourceFilesystem, Path: "/d/file?.[!ab]"}, SourceFilesystem, p("/d/file1.a"), nil, false},
		{Trigger{Type: SourceCron, Expression: "0 * * * *"}, SourceCron, p("0 * * * *"), nil, true},
		{Trigger{Type: SourceCron, Expression: "0 * * * *"}, SourceCron, p("1 * * * *"), nil, false},
		{Trigger{Type: SourceWebhook, Path: "/hook"}, SourceWebhook, p("/hook"), nil, true},
		{Trigger{Type: SourceWebhook, Path: "/hook"}, SourceWebhook, p("/hook/x"), nil, false},
		{Trigger{Type: SourceManual}, SourceManual, nil, nil, true},
		{Trigger{Type: SourceManual}, SourceCron, nil, nil, false},
		{Trigger{Type: SourcePeripheral, Board: "b", Signal: "s"}, SourcePeripheral, p("b/s"), nil, true},
		{Trigger{Type: SourceAMQP, RoutingKey: "a.#"}, SourceAMQP, p("a"), nil, true},
		{Trigger{Type: SourceAMQP, RoutingKey: "a.*.c"}, SourceAMQP, p("a.b.c"), nil, true},
		{Trigger{Type: SourceAMQP, RoutingKey: "a.*.c"}, SourceAMQP, p("a.c"), nil, false},
		{Trigger{Type: SourceChannel, Channel: "telegram"}, SourceChannel, p("Telegram/main"), nil, true},
		{Trigger{Type: SourceChannel, Channel: "git", Alias: &alias}, SourceChannel, p("git.ops:push"), nil, true},
		{Trigger{Type: SourceChannel, Channel: "git", Alias: &alias}, SourceChannel, p("git.dev:push"), nil, false},
		{Trigger{Type: SourceChannel, Channel: "git", Alias: &alias}, SourceChannel, p("git"), nil, false},
		{Trigger{Type: SourceCalendar, CalendarSource: "g"}, SourceCalendar, p(CalendarNoShowTopic), p(`{"calendar_source":"g","calendar_id":"c"}`), true},
		{Trigger{Type: SourceCalendar, CalendarSource: "g", CalendarIDs: []string{"d"}}, SourceCalendar, p(CalendarNoShowTopic), p(`{"calendar_source":"g","calendar_id":"c"}`), false},
	} {
		if got := Match(c.t, c.src, c.topic, c.payload); got != c.want {
			t.Errorf("case %d: Match(%+v, %s) = %v, want %v", i, c.t, c.src, got, c.want)
		}
	}
}

func TestGlobHasNoExponentialBlowUp(t *testing.T) {
	pattern := strings.Repeat("*a", 40) + "b"
	name := strings.Repeat("a", 4000)
	if globMatch(pattern, name) {
		t.Fatal("must not match")
	}
	if AMQPKeyMatches(strings.Repeat("#.", 200)+"x", strings.Repeat("a.", 200)+"y") {
		t.Fatal("must not match")
	}
}

func TestCapUntrusted(t *testing.T) {
	s := "aé€😀" // 1+2+3+4 bytes
	for max := 0; max <= len(s)+1; max++ {
		got := CapUntrusted(s, max)
		if !utf8.ValidString(got) {
			t.Fatalf("max %d: invalid UTF-8 %q", max, got)
		}
		if max > 0 && len(got) > max {
			t.Fatalf("max %d: %d bytes", max, len(got))
		}
		if max == 0 && got != s {
			t.Fatal("0 is no cap")
		}
	}
	if CapUntrusted(s, 4) != "aé" || CapUntrusted(s, 6) != "aé€" {
		t.Fatalf("cut at the boundary: %q %q", CapUntrusted(s, 4), CapUntrusted(s, 6))
	}
}

func u(n uint32) *uint32 { return &n }

func TestResolveNext(t *testing.T) {
	steps := func(ss ...Step) *Sop {
		for i := range ss {
			if ss[i].Number == 0 {
				ss[i].Number = uint32(i + 1)
			}
		}
		return &Sop{Steps: ss}
	}
	done := func(step uint32, out string) Result { return Result{Step: step, Status: StepCompleted, Output: out} }
	fail := func(step uint32, out string) Result { return Result{Step: step, Status: StepFailed, Output: out} }
	in := func(s *Sop, cur uint32, rs ...Result) RouteInput {
		return RouteInput{Sop: s, Current: cur, TotalSteps: uint32(len(s.Steps)), Results: rs, MaxVisits: 256, MaxRetries: 2}
	}
	cases := []struct {
		name string
		in   RouteInput
		want string
	}{
		{"linear", in(steps(Step{}, Step{}), 1, done(1, "x")), "step 2"},
		{"past the last completes", in(steps(Step{}, Step{}), 2, done(2, "x")), "complete"},
		{"terminal", in(steps(Step{Routing: Routing{Terminal: true}}, Step{}), 1, done(1, "")), "complete"},
		{"next", in(steps(Step{Routing: Routing{Next: u(3)}}, Step{}, Step{}), 1, done(1, "")), "step 3"},
		{"next missing", in(steps(Step{Routing: Routing{Next: u(9)}}, Step{}), 1, done(1, "")), "fail: step 9 does not exist"},
		{"when false goes linear, ignoring next", in(steps(Step{Routing: Routing{When: "$.steps.1.n > 5", Next: u(3)}}, Step{}, Step{}), 1, done(1, `{"n":1}`)), "step 2"},
		{"when false and terminal", in(steps(Step{Routing: Routing{When: "$.steps.1.n > 5", Terminal: true}}, Step{}), 1, done(1, `{"n":1}`)), "complete"},
		{"when true follows next", in(steps(Step{Routing: Routing{When: "$.steps.1.n > 5", Next: u(3)}}, Step{}, Step{}), 1, done(1, `{"n":9}`)), "step 3"},
		{"switch first match", in(steps(Step{Routing: Routing{Switch: []SwitchRule{{Name: "crit", When: `$.steps.1.severity == "critical"`, Goto: u(3)}, {Name: "rest", Goto: u(2)}}}}, Step{}, Step{}), 1, done(1, `{"severity":"critical"}`)), "step 3"},
		{"switch catch-all", in(steps(Step{Routing: Routing{Switch: []SwitchRule{{Name: "crit", When: `$.steps.1.severity == "critical"`, Goto: u(3)}, {Name: "rest", Goto: u(2)}}}}, Step{}, Step{}), 1, done(1, `{"severity":"low"}`)), "step 2"},
		{"switch no match completes", in(steps(Step{Routing: Routing{Switch: []SwitchRule{{Name: "crit", When: "$.steps.1.n > 5", Goto: u(2)}}}}, Step{}), 1, done(1, `{"n":1}`)), "complete"},
		{"switch port without target", in(steps(Step{Routing: Routing{Switch: []SwitchRule{{Name: "p"}}}}, Step{}), 1, done(1, "")), "fail: switch port 'p' has no target"},
		{"failed fails with output", in(steps(Step{}, Step{}), 1, fail(1, "boom")), "fail: Step 1 failed: boom"},
		{"retry", in(steps(Step{OnFailure: Failure{Action: FailRetry, Max: 5}}), 1, fail(1, "x")), "retry"},
		{"retry bounded by max_step_retries", in(steps(Step{OnFailure: Failure{Action: FailRetry, Max: 5}}), 1, fail(1, "x"), fail(1, "x"), fail(1, "x")), "fail: step retry limit reached"},
		{"retry bounded by its own max", in(steps(Step{OnFailure: Failure{Action: FailRetry, Max: 1}}), 1, fail(1, "x"), fail(1, "x")), "fail: step retry limit reached"},
		{"goto on failure", in(steps(Step{OnFailure: Failure{Action: FailGoto, Step: 2}}, Step{}), 1, fail(1, "x")), "step 2"},
		{"depends_on unmet waits", in(steps(Step{}, Step{}, Step{Routing: Routing{DependsOn: []uint32{2}}}), 1, done(1, ""), Result{Step: 2, Status: StepSkipped}), "step 2"},
		{"depends_on wait", in(steps(Step{Routing: Routing{Next: u(3)}}, Step{}, Step{Routing: Routing{DependsOn: []uint32{2}}}), 1, done(1, "")), "wait 3"},
		{"depends_on met", in(steps(Step{Routing: Routing{Next: u(3)}}, Step{}, Step{Routing: Routing{DependsOn: []uint32{2}}}), 1, done(2, ""), done(1, "")), "step 3"},
	}
	loop := steps(Step{}, Step{Routing: Routing{When: "$.steps.2.remaining > 0", Next: u(2)}}, Step{})
	li := in(loop, 2, done(2, `{"remaining":1}`))
	cases = append(cases, struct {
		name string
		in   RouteInput
		want string
	}{"self loop", li, "step 2"})
	li.MaxVisits = 1
	cases = append(cases, struct {
		name string
		in   RouteInput
		want string
	}{"visit limit", li, "fail: step 2 visit limit reached"})
	for _, c := range cases {
		if got := ResolveNext(c.in).String(); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

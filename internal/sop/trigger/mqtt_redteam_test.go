package trigger

import (
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

// fakeMsg is a paho.Message as the client library hands one to the listener.
type fakeMsg struct {
	dup     bool
	id      uint16
	topic   string
	payload string
	acked   bool
}

func (m *fakeMsg) Duplicate() bool   { return m.dup }
func (m *fakeMsg) Qos() byte         { return 1 }
func (m *fakeMsg) Retained() bool    { return false }
func (m *fakeMsg) Topic() string     { return m.topic }
func (m *fakeMsg) MessageID() uint16 { return m.id }
func (m *fakeMsg) Payload() []byte   { return []byte(m.payload) }
func (m *fakeMsg) Ack()              { m.acked = true }

// TestMQTTReusedMessageIDIsANewMessage: a packet id is free for reuse once its PUBACK is sent (MQTT 3.1.1
// §2.3.1), and a broker that lost its session (restarted without persistence) numbers from 1 again. So two
// messages with one id, topic and payload are two events unless the second is a redelivery, which the broker
// must mark DUP. A door sensor's second "open" after a broker restart must start a run; a DUP redelivery of
// it must not start another.
func TestMQTTReusedMessageIDIsANewMessage(t *testing.T) {
	eng := engine.New(t.Context(), engine.Config{Store: runstore.NewMemory(), Settings: engine.Defaults()})
	t.Cleanup(eng.Close)
	eng.Reload([]sop.Sop{{Name: "door", Description: "d", Version: "0.1.0", Priority: sop.PriorityNormal,
		ExecutionMode: sop.ModeAuto, MaxConcurrent: 4, AdmissionPolicy: sop.AdmitParallel,
		Triggers: []sop.Trigger{{Type: sop.SourceMQTT, Topic: "door/#"}},
		Steps:    []sop.Step{{Number: 1, Title: "Look", Kind: sop.KindExecute}}}})
	m, err := NewMQTT(MQTTOptions{Alias: "home", Config: config.MQTTConfig{Enabled: true, BrokerURL: "mqtt://127.0.0.1:1",
		ClientID: "zc", QoS: 1}, Dispatcher: eng})
	if err != nil {
		t.Fatal(err)
	}
	first := &fakeMsg{id: 1, topic: "door/front", payload: `{"open":true}`}
	m.deliver(t.Context(), first)
	again := &fakeMsg{id: 1, topic: "door/front", payload: `{"open":true}`} // a new message, the id reused
	m.deliver(t.Context(), again)
	if !first.acked || !again.acked {
		t.Fatal("a message the engine took was not acknowledged")
	}
	if runs := eng.Runs("door"); len(runs) != 2 {
		t.Fatalf("two messages under one reused id admitted %d runs, want 2", len(runs))
	}
	redelivered := &fakeMsg{dup: true, id: 1, topic: "door/front", payload: `{"open":true}`}
	m.deliver(t.Context(), redelivered)
	if runs := eng.Runs("door"); len(runs) != 2 {
		t.Fatalf("a DUP redelivery admitted a run: %d runs, want 2", len(runs))
	}
}

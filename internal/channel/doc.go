// Package channel is the delivery core shared by every chat adapter (Telegram, MQTT, IRC, email, Discord,
// Slack, Matrix): each inbound platform event is recorded durably before the adapter acknowledges it, routed to
// the owning agent's session, answered exactly once, and each channel's liveness is judged by progress.
//
// An adapter knows its platform's wire; the core knows delivery. The seam between them is Adapter (what the
// core calls) and Deliverer (what the adapter calls for each inbound event). Optional abilities (typing
// indicators, approval prompts, checking whether a message was sent) are separate small interfaces an adapter
// implements when its platform has them.
package channel

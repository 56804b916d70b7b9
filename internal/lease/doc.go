// Package lease gives each piece of shared work to exactly one of several daemons sharing one PostgreSQL
// database, with no consensus of our own: PostgreSQL's row locks and its clock decide.
//
// Two tools:
//   - A Lease is a named, time-bounded claim (a channel poller, a session's running turn, the scheduler's
//     leadership) with a fencing token: the token grows by one each time the lease changes hands, and a write
//     made on the lease's behalf runs in a transaction that first checks, under a row lock (Check), that the
//     lease is still held with that token, so a daemon that lost its lease (a pause, a network cut) cannot
//     write after another has taken over.
//   - A work Slot is one unit of work that must run once (a cron job's due slot, a heartbeat tick, a SOP
//     trigger event), keyed by (kind, slot). Claim gives it to one daemon; Complete records its end. A daemon
//     that dies mid-work loses the slot when its claim expires; the next daemon to claim it finds it expired
//     and, by the caller's choice, marks it interrupted (the work may have had effects: never run twice) or
//     runs it again with a higher token. No slot is ever run by two live claims, and none is left without a
//     recorded end once a daemon looks at it again.
//
// Every deadline is computed by the server (now() + ttl), never from a daemon's clock, so daemons whose clocks
// disagree still agree on who holds what. Holders are daemon ids (NewHolderID): host, pid and a random part.
package lease

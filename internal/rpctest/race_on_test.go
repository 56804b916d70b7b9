//go:build race

package rpctest

// raceAllocSlack is added to allocation bounds under the race detector: it makes sync.Pool drop a share of what
// is put back at random, so pooled buffers are allocated again now and then.
const raceAllocSlack = 3

// raceEnabled: the race detector instruments every function, which makes stack frames larger.
const raceEnabled = true

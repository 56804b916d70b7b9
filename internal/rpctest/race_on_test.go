//go:build race

package rpctest

// raceEnabled: the race detector instruments every function, which makes stack frames larger.
const raceEnabled = true

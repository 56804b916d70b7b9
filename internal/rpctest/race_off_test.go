//go:build !race

package rpctest

// raceAllocSlack is 0 without the race detector: allocation counts are exact.
const raceAllocSlack = 0

const raceEnabled = false

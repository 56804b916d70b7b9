//go:build !race

package rpctest

const raceEnabled = false

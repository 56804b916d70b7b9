//go:build unix

package irc

import "syscall"

var stopSignal, contSignal = syscall.SIGSTOP, syscall.SIGCONT

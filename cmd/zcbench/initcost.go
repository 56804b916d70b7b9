package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// initCost is what the binary's package initialisation costs before main runs, as the runtime reports it with
// GODEBUG=inittrace=1: every allocation here is made at every start of every zeroclaw command.
type initCost struct {
	allocs, bytes int
	pkgs          []pkgInit // the costliest first
}

type pkgInit struct {
	pkg           string
	allocs, bytes int
}

// measureInit runs `bin version` with inittrace on and sums its report.
func measureInit(bin string) (initCost, error) {
	cmd := exec.Command(bin, "version")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	if err := cmd.Run(); err != nil {
		return initCost{}, fmt.Errorf("%s version: %v: %s", bin, err, stderr.Bytes())
	}
	return parseInitTrace(stderr.Bytes())
}

// parseInitTrace reads lines "init PKG @T ms, C ms clock, B bytes, A allocs".
func parseInitTrace(b []byte) (initCost, error) {
	var c initCost
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		by, err1 := strconv.Atoi(f[7])
		al, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			return initCost{}, fmt.Errorf("inittrace line %q", sc.Text())
		}
		c.allocs += al
		c.bytes += by
		c.pkgs = append(c.pkgs, pkgInit{pkg: f[1], allocs: al, bytes: by})
	}
	if len(c.pkgs) == 0 {
		return initCost{}, fmt.Errorf("no inittrace lines in %q", b[:min(len(b), 200)])
	}
	slices.SortStableFunc(c.pkgs, func(a, b pkgInit) int { return b.allocs - a.allocs })
	return c, nil
}

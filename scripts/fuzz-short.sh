#!/usr/bin/env bash
# Runs every fuzz target of the module for a bounded time each (default 10s): scripts/fuzz-short.sh [duration]
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-10s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $target ($dur)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$dur" "$pkg"
  done
done

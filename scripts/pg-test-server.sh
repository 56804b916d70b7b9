#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: a fresh cluster in a temporary directory, listening only on a Unix
# socket in that directory (no TCP port), with one database. It exports ZEROCLAW_TEST_PG_DSN, which the memory
# tests and the two-daemon end-to-end test read.
#
#   source scripts/pg-test-server.sh         # start it in this shell; it stops when the shell exits
#   scripts/pg-test-server.sh go test ./...  # start it, run the command, stop it
#
# The server binaries come from the Debian package postgresql (installed with apt-get when missing and we are
# root). PostgreSQL refuses to run as root: as root the cluster belongs to the postgres user.

pg_test_server_bindir() {
  local d
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return 0
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

pg_test_server_stop() {
  if [ -n "${PG_TEST_DIR:-}" ] && [ -d "$PG_TEST_DIR" ]; then
    pg_test_server_as "$PG_TEST_BIN/pg_ctl" -D "$PG_TEST_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$PG_TEST_DIR"
  fi
  PG_TEST_DIR=
}

# pg_test_server_as runs a server command as the cluster's owner.
pg_test_server_as() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_test_server_start() {
  if ! PG_TEST_BIN=$(pg_test_server_bindir); then
    if [ "$(id -u)" != 0 ]; then
      echo "pg-test-server: no PostgreSQL server binaries (install the Debian package postgresql)" >&2
      return 1
    fi
    echo "pg-test-server: installing postgresql" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || return 1
    if ! PG_TEST_BIN=$(pg_test_server_bindir); then
      echo "pg-test-server: postgresql installed but initdb not found" >&2
      return 1
    fi
  fi
  PG_TEST_DIR=$(mktemp -d /tmp/zc-pg.XXXXXX) || return 1
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/false postgres || return 1
    chown postgres: "$PG_TEST_DIR"
  fi
  # fsync off and no TCP: a disposable cluster that starts in a second or two.
  pg_test_server_as "$PG_TEST_BIN/initdb" -D "$PG_TEST_DIR/data" -U postgres -A trust -E UTF8 --locale=C --no-sync \
    >"$PG_TEST_DIR/initdb.log" 2>&1 || { cat "$PG_TEST_DIR/initdb.log" >&2; pg_test_server_stop; return 1; }
  pg_test_server_as "$PG_TEST_BIN/pg_ctl" -D "$PG_TEST_DIR/data" -l "$PG_TEST_DIR/server.log" -w -t 30 \
    -o "-c listen_addresses= -k $PG_TEST_DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >/dev/null || { cat "$PG_TEST_DIR/server.log" >&2; pg_test_server_stop; return 1; }
  pg_test_server_as "$PG_TEST_BIN/createdb" -h "$PG_TEST_DIR" -U postgres zeroclaw_test || { pg_test_server_stop; return 1; }
  export ZEROCLAW_TEST_PG_DSN="postgres:///zeroclaw_test?host=$PG_TEST_DIR&user=postgres&sslmode=disable"
  echo "pg-test-server: PostgreSQL $("$PG_TEST_BIN/pg_ctl" --version | awk '{print $3}') on $PG_TEST_DIR; ZEROCLAW_TEST_PG_DSN=$ZEROCLAW_TEST_PG_DSN" >&2
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  # Sourced: start, and stop when the sourcing shell exits.
  pg_test_server_start || return 1
  trap pg_test_server_stop EXIT
else
  set -euo pipefail
  if [ $# -eq 0 ]; then
    echo "usage: source $0  |  $0 COMMAND [ARGS...]" >&2
    exit 2
  fi
  pg_test_server_start
  trap pg_test_server_stop EXIT
  "$@"
fi

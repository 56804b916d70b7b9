#!/usr/bin/env bash
# Builds upstream's web dashboard (zeroclaw-labs/zeroclaw, web/), serves it from our gateway (web_dist_dir),
# pairs, and visits each of its pages in headless Chromium (scripts/upstream-dashboard.mjs), printing a table of
# what each page did. Local only: it fetches upstream's source and npm packages, so .ci/run does not run it.
#
#   scripts/upstream-dashboard.sh
#
# Environment (all optional):
#   UPSTREAM_GIT  a git directory of upstream's repository (a clone or a bare mirror); default: a shallow clone
#   UPSTREAM_REF  the commit or branch whose web/ is built (default HEAD)
#   WORK          where it builds and runs (default: a new temp directory, kept for a look afterwards)
#   CHROMIUM      the browser (default /usr/bin/chromium)
#   PORT          the gateway's port (default 42681)
# Needs: go, git, node and npm, Chromium.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$(mktemp -d -t zc-upweb.XXXXXX)}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
PORT=${PORT:-42681}
REF=${UPSTREAM_REF:-HEAD}
mkdir -p "$WORK"
echo "work directory: $WORK"

# 1. Upstream's web/ at REF.
if [[ -z "${UPSTREAM_GIT:-}" ]]; then
  UPSTREAM_GIT=$WORK/upstream.git
  [[ -d $UPSTREAM_GIT ]] || git clone --bare --depth 1 --filter=blob:none https://github.com/zeroclaw-labs/zeroclaw "$UPSTREAM_GIT"
fi
rm -rf "$WORK/web"
git --git-dir="$UPSTREAM_GIT" archive "$REF" web | tar -x -C "$WORK"
echo "upstream web/ at $(git --git-dir="$UPSTREAM_GIT" rev-parse --short "$REF")"

# 2. Build it. Upstream generates src/lib/api-{descriptions,enums}.ts from its Rust types (`cargo web gen-api`);
# without a Rust toolchain they are empty tables here (no field help, no SOP enum lists), and `vite build` runs
# without upstream's `tsc -b` step, which needs the generated api-generated.ts types too.
cat >"$WORK/web/src/lib/api-descriptions.ts" <<'EOF'
// Stand-in for upstream's generated file (scripts/upstream-dashboard.sh): no field help.
export type FieldDescriptions = Record<string, Record<string, string>>;
export const fieldDescriptions: FieldDescriptions = {};
export function fieldHelp(schema: string, field: string): string | undefined {
  return fieldDescriptions[schema]?.[field];
}
EOF
cat >"$WORK/web/src/lib/api-enums.ts" <<'EOF'
// Stand-in for upstream's generated file (scripts/upstream-dashboard.sh): no enum lists.
export type EnumValues = Record<string, readonly string[]>;
export const enumValues: EnumValues = {};
export function enumMembers(schema: string): readonly string[] {
  return enumValues[schema] ?? [];
}
EOF
(cd "$WORK/web" && npm ci --no-audit --no-fund --loglevel=error && npx vite build --logLevel warn)

# 3. Our daemon, with the build as web_dist_dir.
(cd "$repo" && go build -o "$WORK/zeroclaw" ./cmd/zeroclaw)
install=$WORK/install
rm -rf "$install" && mkdir -p "$install"
cat >"$install/config.toml" <<EOF
schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"
cron_jobs = ["nightly"]

[risk_profiles.supervised]
level = "supervised"

[skill_bundles.team]

[cron.nightly]
command = "true"
schedule = { kind = "cron", expr = "0 2 * * *", tz = "UTC" }

[gateway]
port = $PORT
web_dist_dir = "$WORK/web/dist"
EOF
"$WORK/zeroclaw" daemon --config-dir "$install" >"$WORK/daemon.log" 2>&1 &
daemon=$!
trap 'kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true' EXIT
base=http://127.0.0.1:$PORT
for _ in $(seq 100); do
  code=$(grep -oE 'pairing code: [0-9]{6}' "$WORK/daemon.log" | grep -oE '[0-9]{6}' || true)
  [[ -n $code ]] && curl -fsS "$base/health" >/dev/null 2>&1 && break
  kill -0 "$daemon" 2>/dev/null || { cat "$WORK/daemon.log"; exit 1; }
  sleep 0.1
done
[[ -n ${code:-} ]] || { echo "no pairing code in $WORK/daemon.log" >&2; exit 1; }
mkdir -p "$install/shared/not-empty" && echo kept >"$install/shared/not-empty/keep.txt" # for the rmdir flow
token=$(curl -fsS -X POST -H "X-Pairing-Code: $code" "$base/pair" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).token))')

# 4. Chromium through playwright-core (the browser is the system's; no download).
mkdir -p "$WORK/driver"
cp "$repo/scripts/upstream-dashboard.mjs" "$WORK/driver/"
[[ -d $WORK/driver/node_modules/playwright-core ]] ||
  (cd "$WORK/driver" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error playwright-core@1)
node "$WORK/driver/upstream-dashboard.mjs" "$base" "$token" "$CHROMIUM"

#!/usr/bin/env bash
# Builds the single `loom` binary into dist/loom.
#   bash compile.sh          with Bun (default; needs only `npm ci`)
#   bash compile.sh --deno   with `deno compile` (downloads a runtime: needs network access to Deno's servers)
# The Bun build carries the commit and the build date for `loom --version` (SOURCE_DATE_EPOCH, when set, fixes the
# date; outside a git checkout the commit reads "unknown").
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PWD/node_modules/.bin:$PATH"
bash scripts/runtimes.sh
mkdir -p dist
if [ "${1:-}" = "--deno" ]; then
  ./node_modules/deno/deno compile --allow-all --output dist/loom main.ts
else
  bun build --compile --minify-syntax $(bash scripts/build-flags.sh) --outfile dist/loom main.ts >/dev/null
fi
echo "built dist/loom: $(./dist/loom --version)" >&2

#!/usr/bin/env bash
# Makes the Bun and Deno binaries from `npm ci` usable when npm did not run their install scripts (`npm ci
# --ignore-scripts`, or an npm that blocks dependency install scripts not listed in package.json's allowScripts).
# Both packages ship the real binary in a platform package (@oven/bun-*, @deno/*) that npm installs either way; their
# install scripts only put it in place, which this runs — offline — when `bun` or `deno` does not start.
# compile.sh, scripts/test.sh and .ci/run call it; it does nothing when both already work.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || { echo "runtimes: no node_modules: run \`npm ci\` first" >&2; exit 1; }
if ! ./node_modules/.bin/bun --version >/dev/null 2>&1; then
  echo "runtimes: linking Bun from its platform package (npm skipped its install script)" >&2
  (cd node_modules/bun && node install.js)
fi
if ! ./node_modules/deno/deno --version >/dev/null 2>&1; then
  echo "runtimes: linking Deno from its platform package (npm skipped its install script)" >&2
  (cd node_modules/deno && node install.cjs)
fi

#!/usr/bin/env bash
# Runs the whole test suite under Bun and under Deno, then prints one line: "tests: N passed, N failed", followed by
# ", N skipped" when tests were skipped (each skipping file says why in one line, repeated above the summary).
# The end-to-end tests use dist/loom, so the binary is built first.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
bash compile.sh || { echo "tests: 0 passed, 1 failed"; exit 1; }
mkdir -p tests/artifacts
strip() { sed -e 's/\x1b\[[0-9;]*m//g'; }

# The output goes to a log as well as the screen: no colour codes in it unless a person is watching a terminal
# (https://no-color.org; both runners obey NO_COLOR).
[ -t 1 ] || export NO_COLOR=1

bun_log=tests/artifacts/bun.log
deno_log=tests/artifacts/deno.log
# Per-test timeouts guard against hangs only: sized for a loaded 2-core machine, never a measure of speed.
bun test --timeout 600000 2>&1 | tee "$bun_log"
bun_rc=${PIPESTATUS[0]}
./node_modules/deno/deno test --allow-all --no-check tests/ 2>&1 | tee "$deno_log"
deno_rc=${PIPESTATUS[0]}

bun_pass=$(strip <"$bun_log" | grep -Eo '^ *[0-9]+ pass' | tail -1 | grep -Eo '[0-9]+' || echo 0)
bun_fail=$(strip <"$bun_log" | grep -Eo '^ *[0-9]+ fail' | tail -1 | grep -Eo '[0-9]+' || echo 0)
bun_skip=$(strip <"$bun_log" | grep -Eo '^ *[0-9]+ skip' | tail -1 | grep -Eo '[0-9]+' || echo 0)
deno_summary=$(strip <"$deno_log" | grep -E '^(ok|FAILED) \|' | tail -1)
deno_pass=$(echo "$deno_summary" | grep -Eo '[0-9]+ passed' | head -1 | grep -Eo '[0-9]+' || echo 0)
deno_fail=$(echo "$deno_summary" | grep -Eo '[0-9]+ failed' | head -1 | grep -Eo '[0-9]+' || echo 0)
deno_skip=$(echo "$deno_summary" | grep -Eo '[0-9]+ ignored' | head -1 | grep -Eo '[0-9]+' || echo 0)
[ -n "$bun_pass" ] || bun_pass=0; [ -n "$bun_fail" ] || bun_fail=0
[ -n "$deno_pass" ] || deno_pass=0; [ -n "$deno_fail" ] || deno_fail=0
[ -n "$bun_skip" ] || bun_skip=0; [ -n "$deno_skip" ] || deno_skip=0
# A runner that crashed without a summary counts as a failure.
if [ "$bun_rc" -ne 0 ] && [ "$bun_fail" -eq 0 ]; then bun_fail=1; fi
if [ "$deno_rc" -ne 0 ] && [ "$deno_fail" -eq 0 ]; then deno_fail=1; fi

skipped=$((bun_skip + deno_skip))
if [ "$skipped" -gt 0 ]; then
  strip <"$bun_log" | grep -E '^[a-z0-9.-]+\.test\.ts: skipping' | sort -u
fi
echo "bun: $bun_pass passed, $bun_fail failed, $bun_skip skipped; deno: $deno_pass passed, $deno_fail failed, $deno_skip skipped"
passed=$((bun_pass + deno_pass))
failed=$((bun_fail + deno_fail))
if [ "$skipped" -gt 0 ]; then
  echo "tests: $passed passed, $failed failed, $skipped skipped"
else
  echo "tests: $passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

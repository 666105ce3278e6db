#!/usr/bin/env bash
# Fetches the real agent trajectories the benchmark and the workload tests replay (they are third-party files, so the
# repository does not carry them) from their public sources at pinned commits, and checks every file against
# scripts/workloads.sha256. Needs git and network access to github.com.
#   bash scripts/fetch-workloads.sh [DIR]     (default: ../shared/workloads beside the repository)
# Then: `LOOM_WORKLOADS=DIR npm test`, `bun run bench --workloads DIR` (the default folder needs neither).
#
# Sources (both MIT-licensed; files are byte-identical to the originals, only names changed — the manifest maps each
# original by its SHA-256 to its name here):
#   mini-swe-agent/  github.com/gruckion/mini-swe-agent @ d12a71affd95, swebench_results/20251118_gemini-3-pro-74pct/trajs/
#   swe-agent/       github.com/SWE-agent/SWE-agent @ 3ea751c0, tests/test_data/trajectories/ and trajectories/demonstrations/
#   swe-agent-long/  github.com/SWE-bench/SWE-smith @ cf2e649d1eb4, tests/test_logs/trajectories/ (3 longer SWE-agent runs)
#   openhands/       github.com/OpenHands/software-agent-sdk @ 611629e69, tests/fixtures/llm_data/ (2 completion logs,
#                    format samples)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
manifest="$here/workloads.sha256"
dest="${1:-$here/../../shared/workloads}"

sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1; }
for tool in git; do
  command -v "$tool" >/dev/null 2>&1 || { echo "fetch-workloads: needs $tool" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# fetch NAME URL COMMIT PATH...: a blobless clone, then only the named folders at the pinned commit.
fetch() {
  local name=$1 url=$2 commit=$3
  shift 3
  echo "fetch-workloads: $url @ $commit" >&2
  git clone --quiet --filter=blob:none --no-checkout "$url" "$work/$name"
  git -C "$work/$name" checkout --quiet "$commit" -- "$@"
}
fetch mini https://github.com/gruckion/mini-swe-agent.git d12a71affd95 \
  swebench_results/20251118_gemini-3-pro-74pct/trajs
fetch swe https://github.com/SWE-agent/SWE-agent.git 3ea751c0 \
  tests/test_data/trajectories trajectories/demonstrations
fetch smith https://github.com/SWE-bench/SWE-smith.git cf2e649d1eb4 tests/test_logs/trajectories
fetch openhands https://github.com/OpenHands/software-agent-sdk.git 611629e69 tests/fixtures/llm_data

# Index every fetched file by its hash, then place each manifest entry under its name.
index="$work/index"
find "$work/mini" "$work/swe" "$work/smith" "$work/openhands" -type f \( -name '*.json' -o -name '*.traj' \) -not -path '*/.git/*' -print0 |
  while IFS= read -r -d '' file; do printf '%s %s\n' "$(sha256 "$file")" "$file"; done >"$index"

mkdir -p "$dest/mini-swe-agent" "$dest/swe-agent" "$dest/swe-agent-long" "$dest/openhands"
missing=0
while read -r hash name; do
  source=$(grep -m1 "^$hash " "$index" | cut -d' ' -f2- || true)
  if [ -z "$source" ]; then
    echo "fetch-workloads: no fetched file matches $name (sha256 $hash)" >&2
    missing=$((missing + 1))
    continue
  fi
  cp "$source" "$dest/$name"
  [ "$(sha256 "$dest/$name")" = "$hash" ] || { echo "fetch-workloads: $name changed while copying" >&2; exit 1; }
done <"$manifest"

total=$(wc -l <"$manifest" | tr -d ' ')
if [ "$missing" -gt 0 ]; then
  echo "fetch-workloads: $missing of $total files missing; the sources may have moved" >&2
  exit 1
fi
echo "fetch-workloads: $total files checked against scripts/workloads.sha256 in $dest"

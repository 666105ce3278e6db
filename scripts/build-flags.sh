#!/usr/bin/env bash
# Prints the `bun build --compile` flags every Loom binary is built with (compile.sh and scripts/release.sh):
# bytecode (faster start-up; ESM, because main.ts awaits at the top level) and the build information
# `loom --version` prints — the commit ("-dirty" when tracked files changed) and the UTC build date, which
# SOURCE_DATE_EPOCH fixes for reproducible builds. Outside a git checkout the commit is left out ("unknown").
# Autoloading is off: by default a Bun standalone binary reads bunfig.toml (whose `preload` runs code) and .env /
# .env.local (which set LOOM_SANDBOX, *_BASE_URL, LOOM_BWRAP, ...) from the folder it starts in, and that folder is a
# prompt run's default workspace, which the model writes. A Loom binary reads no configuration or code from it
# (bun build --help, Bun 1.4.5: --no-compile-autoload-{dotenv,bunfig,tsconfig,package-json}).
# Code splitting: main.ts imports each command (and zod behind them) only when it runs; without --splitting they are
# all one module of the binary, whose bytecode is loaded whole at start. Split, `loom --version` loads only the router's
# chunk: CPU per start 15-18 ms -> 11-12 ms, 1.9-2.6x -> 1.6-1.75x `bun -e 0` (bench/startup.ts, 2026-12-03, a loaded
# 2-core machine). --minify and --sourcemap=none measured no difference and are left out.
set -euo pipefail
cd "$(dirname "$0")/.."
flags="--bytecode --format=esm --splitting"
flags="$flags --no-compile-autoload-dotenv --no-compile-autoload-bunfig"
flags="$flags --no-compile-autoload-tsconfig --no-compile-autoload-package-json"
if commit=$(git rev-parse --short=12 HEAD 2>/dev/null); then
  [ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit-dirty"
  flags="$flags --define LOOM_COMMIT=\"$commit\""
fi
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
else
  date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
fi
echo "$flags --define LOOM_BUILD_DATE=\"$date\""

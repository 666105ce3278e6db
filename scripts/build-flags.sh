#!/usr/bin/env bash
# Prints the `bun build --compile` flags every Loom binary is built with (compile.sh and scripts/release.sh):
# bytecode (faster start-up; ESM, because main.ts awaits at the top level) and the build information
# `loom --version` prints — the commit ("-dirty" when tracked files changed) and the UTC build date, which
# SOURCE_DATE_EPOCH fixes for reproducible builds. Outside a git checkout the commit is left out ("unknown").
# Autoloading is off: by default a Bun standalone binary reads bunfig.toml (whose `preload` runs code) and .env /
# .env.local (which set LOOM_SANDBOX, *_BASE_URL, LOOM_BWRAP, ...) from the folder it starts in, and that folder is a
# prompt run's default workspace, which the model writes. A Loom binary reads no configuration or code from it
# (bun build --help, Bun 1.4.5: --no-compile-autoload-{dotenv,bunfig,tsconfig,package-json}).
set -euo pipefail
cd "$(dirname "$0")/.."
flags="--bytecode --format=esm"
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

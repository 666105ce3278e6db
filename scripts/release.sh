#!/usr/bin/env bash
# Builds the release archives: one `loom` binary per target with `bun build --compile --target=bun-TARGET`, packed as
# loom-VERSION-TARGET.tar.gz (loom-VERSION-windows-x64.zip for Windows) with LICENSE, README.md and CHANGELOG.md,
# and a SHA256SUMS file over them (`sha256sum -c SHA256SUMS` checks it).
#   bash scripts/release.sh [--out DIR] [--host | TARGET…]    default: dist/release, every target below
# install.sh and models.json (the model table, for `loom models update`) are beside the archives, so a release serves
# them too.
# Bun downloads the runtime of each target other than the host's; where it cannot, the script says so in one line per
# target and builds the rest. The host's target always builds (its failure fails the script). The version is
# package.json's; .github/workflows/release.yml runs this script for a `v*` tag and publishes the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

ALL_TARGETS=(linux-x64 linux-arm64 linux-x64-musl darwin-x64 darwin-arm64 windows-x64)
out=dist/release
targets=()
host_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --host) host_only=1; shift ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "release: unknown option $1" >&2; exit 2 ;;
    *)
      case " ${ALL_TARGETS[*]} " in
        *" $1 "*) targets+=("$1") ;;
        *) echo "release: unknown target $1 (known: ${ALL_TARGETS[*]})" >&2; exit 2 ;;
      esac
      shift ;;
  esac
done
bash scripts/runtimes.sh
version=$(node -p 'require("./package.json").version')

# The host's target in Bun's naming; musl when the C library is musl.
host_target() {
  local os arch libc=""
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    MINGW* | MSYS* | CYGWIN*) os=windows ;;
    *) os=unknown ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch=unknown ;;
  esac
  if [ "$os" = linux ] && { ldd --version 2>&1 || true; } | grep -qi musl; then libc=-musl; fi
  echo "$os-$arch$libc"
}
host=$(host_target)
if [ "$host_only" = 1 ]; then
  targets=("$host")
elif [ ${#targets[@]} -eq 0 ]; then
  targets=("${ALL_TARGETS[@]}")
fi

sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/loom-* "$out/SHA256SUMS" "$out/install.sh" "$out/models.json" "$out/models.json.sha256"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Every target gets the same build information (one commit, one date).
read -r -a flags <<<"$(bash scripts/build-flags.sh)"

built=()
unavailable=()
for target in "${targets[@]}"; do
  name="loom-$version-$target"
  exe=loom
  [ "${target%%-*}" = windows ] && exe=loom.exe
  mkdir -p "$work/$name"
  log="$work/$target.log"
  if ! bun build --compile --minify-syntax "${flags[@]}" --target="bun-$target" --outfile "$work/$name/$exe" main.ts \
    >"$log" 2>&1; then
    reason=$(grep -m1 -iE 'error|fail' "$log" || head -1 "$log")
    if [ "$target" = "$host" ]; then
      cat "$log" >&2
      echo "release: the host target $target failed to build" >&2
      exit 1
    fi
    echo "release: $target unavailable: ${reason:-bun build failed}" >&2
    unavailable+=("$target")
    continue
  fi
  cp LICENSE README.md CHANGELOG.md "$work/$name/"
  if [ "$exe" = loom.exe ]; then
    (cd "$work" && zip -qr "$out/$name.zip" "$name")
  else
    tar -C "$work" -czf "$out/$name.tar.gz" "$name"
  fi
  echo "release: built $name" >&2
  built+=("$target")
done

[ ${#built[@]} -gt 0 ] || { echo "release: nothing was built" >&2; exit 1; }
# The built-in model table, beside the binaries: `loom models update` reads the latest release's models.json (and its
# models.json.sha256). An empty config folder, so no table installed on this machine leaks in.
XDG_CONFIG_HOME="$work/no-config" bun main.ts models --json >"$out/models.json"
(cd "$out" && sha256 models.json >models.json.sha256)
(cd "$out" && sha256 loom-"$version"-* models.json >SHA256SUMS)
cp install.sh "$out/install.sh"
echo "release: ${#built[@]} archives, models.json and SHA256SUMS in $out (${#unavailable[@]} targets unavailable)"

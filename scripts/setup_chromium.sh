#!/usr/bin/env bash
# Headless Chromium for the browser tests of tests/unit/view/test_results_page.py (the unit tier):
# Debian's package, system-wide (~20 s on a fresh Debian 12 machine). Scoring needs none of it, so
# scripts/setup.sh leaves it out; scripts/setup_tests.sh runs this beside the other set-ups.
# Skipped when a chromium is on PATH; a note, not a failure, where it cannot be installed (no
# apt-get, not root, no network): those tests then fail saying so. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v chromium >/dev/null 2>&1; then
    echo "setup_chromium.sh: $(command -v chromium) is there"
    exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    mkdir -p build
    exec 9>build/apt.lock  # one apt-get at a time: scripts/setup_postgres.sh may run beside this
    flock 9
    { apt-get -o DPkg::Lock::Timeout=300 update -qq \
        && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
            --no-install-recommends chromium; } \
        || echo "setup_chromium.sh: could not install chromium; the browser tests in tests/unit/view/test_results_page.py will fail" >&2
else
    echo "setup_chromium.sh: no chromium on PATH and no root apt-get to install it;" \
        "the browser tests in tests/unit/view/test_results_page.py will fail" >&2
fi

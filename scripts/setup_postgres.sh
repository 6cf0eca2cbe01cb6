#!/usr/bin/env bash
# Set up the Mastra-storage tier's PostgreSQL (tests/storage): Debian's `postgresql` package (the
# server binaries under /usr/lib/postgresql/<version>/bin) and the Python driver psycopg (the
# `postgres` extra) in .venv. The tier starts its own throwaway server from those binaries
# (tests/storage/pg_server.py: a temporary cluster on 127.0.0.1, run as the `postgres` user when
# the tests run as root); this script starts nothing.
#
# Idempotent: with both present it does nothing (< 1 s). Installing the package needs root (or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    mkdir -p build
    exec 9>build/apt.lock  # one apt-get at a time: scripts/setup_chromium.sh may run beside this
    flock 9
    $SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq postgresql >/dev/null
    # Debian creates and starts a default cluster: the tier needs none of it running
    command -v pg_ctlcluster >/dev/null && $SUDO pg_ctlcluster --help >/dev/null 2>&1 && \
        for c in /etc/postgresql/*/main; do [ -d "$c" ] && $SUDO pg_ctlcluster "$(basename "$(dirname "$c")")" main stop || true; done
fi
if ! .venv/bin/python -c "import psycopg" 2>/dev/null; then
    .venv/bin/pip install -q -e ".[postgres]"
fi
echo "setup_postgres.sh: PostgreSQL $(ls /usr/lib/postgresql | sort -n | tail -1) and psycopg $(.venv/bin/python -c 'import psycopg; print(psycopg.__version__)') ready"

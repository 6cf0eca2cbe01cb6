#!/usr/bin/env bash
# Set up benchmarks/peers/mastra: Mastra's published scorers (@mastra/evals 1.10.2, @mastra/core
# 1.71.0 and ai 5, as tests/differential/node pins them), the AI SDK's OpenAI-compatible provider
# (@ai-sdk/openai-compatible 1.0.46, the ai 5 line @mastra/core itself names) and the project's
# pinned Node.js 22 (npm's `node` package: node_modules/.bin/node), installed from the committed
# lockfile with `npm ci`. The peer of benchmarks/peers/bench_mastra.py; never part of localjudge.
#
# Needs npm on the PATH and the npm registry (or a warm ~/.npm). Idempotent: when node_modules
# holds what the lockfile says (a stamp of its hash) and the pinned Node runs, it does nothing.
# `--legacy-peer-deps`: @mastra/core lists `chat`, which asks for ai 6 or 7 as a peer (as in
# scripts/setup_node.sh). No --prefer-offline: a stale cached package list once failed `npm ci` here
# ("No matching version found for suffix-thumb@6.1.0", a version the registry has).
set -euo pipefail
cd "$(dirname "$0")/mastra"
NODE_VERSION=v22.23.3
STAMP=node_modules/.localjudge-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] \
        && [ "$(node_modules/.bin/node --version 2>/dev/null)" = "$NODE_VERSION" ]; then
    echo "setup_mastra_peer.sh: benchmarks/peers/mastra is set up (Node $NODE_VERSION, lockfile unchanged)"
    exit 0
fi
command -v npm >/dev/null || { echo "setup_mastra_peer.sh: npm is not on the PATH: install Node.js first" >&2; exit 1; }
npm ci --legacy-peer-deps --no-audit --no-fund --loglevel=error
got=$(node_modules/.bin/node --version)
if [ "$got" != "$NODE_VERSION" ]; then
    echo "setup_mastra_peer.sh: node_modules/.bin/node is $got, not $NODE_VERSION" >&2
    exit 1
fi
echo "$want" > "$STAMP"
echo "setup_mastra_peer.sh: benchmarks/peers/mastra set up (Node $got; @mastra/evals $(node_modules/.bin/node -p \
    "require('./node_modules/@mastra/evals/package.json').version"))"

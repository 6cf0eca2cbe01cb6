#!/usr/bin/env bash
# Set up the differential tier's Node.js side (tests/differential/node): Mastra's published
# scorers (@mastra/evals 1.10.2, @mastra/core 1.71.0, ai 5) and a pinned Node.js 22 runtime
# (npm's `node` package, which ships the binary as node_modules/.bin/node: Mastra declares
# Node >= 22.13, whatever Node runs npm here), installed from the committed lockfile with `npm ci`.
#
# Needs npm on the PATH (any recent Node.js) and the npm registry, or a warm npm cache
# (`npm ci` reads ~/.npm first). Idempotent: when node_modules already holds what the lockfile
# says (a stamp of the lockfile's hash) and the pinned Node runs, it does nothing (< 1 s).
# `--legacy-peer-deps`: @mastra/core lists `chat`, which asks for ai 6 or 7 as a peer; the
# scorers run on ai 5 (`ai/test`'s MockLanguageModelV2 is the scripted judge).
set -euo pipefail
cd "$(dirname "$0")/../tests/differential/node"
NODE_VERSION=v22.23.3
STAMP=node_modules/.localjudge-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] \
        && [ "$(node_modules/.bin/node --version 2>/dev/null)" = "$NODE_VERSION" ]; then
    echo "setup_node.sh: tests/differential/node is set up (Node $NODE_VERSION, lockfile unchanged)"
    exit 0
fi
command -v npm >/dev/null || { echo "setup_node.sh: npm is not on the PATH: install Node.js first" >&2; exit 1; }
npm ci --legacy-peer-deps --prefer-offline --no-audit --no-fund --loglevel=error
got=$(node_modules/.bin/node --version)
if [ "$got" != "$NODE_VERSION" ]; then
    echo "setup_node.sh: node_modules/.bin/node is $got, not $NODE_VERSION" >&2
    exit 1
fi
echo "$want" > "$STAMP"
echo "setup_node.sh: tests/differential/node set up (Node $got; @mastra/evals $(node_modules/.bin/node -p \
    "require('./node_modules/@mastra/evals/package.json').version"))"

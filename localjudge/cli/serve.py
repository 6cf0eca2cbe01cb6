"""`localjudge serve`: the judge loaded once, behind OpenAI's chat API (docs/serve.md)."""

from __future__ import annotations

import argparse
import importlib.util
import ipaddress
import math
import os
import sys
from typing import Any

from localjudge.cli import model_flags
from localjudge.cli.shared import CliError
from localjudge.credentials import CredentialError, check_credential
from localjudge.serve import Caps, Limits, create_app

DEFAULT_PORT = 8321
LOCAL_ENGINES = ("transformers", "vllm")


def add_serve_parser(sub: Any) -> None:
    """Add the `serve` command to the `localjudge` subparsers."""
    serve = sub.add_parser(
        "serve", help="serve the judge over OpenAI's chat API: every structured answer parses",
        description="Load the judge once and serve OpenAI's /v1/chat/completions and /v1/models, so an eval "
        "framework's judge (Mastra's scorers, DeepEval, Ragas, the openai client) runs on it: a JSON schema in "
        "response_format, in a tool or written into the prompt (Mastra's, Ragas', LangChain's instruction) is "
        "enforced by the grammar; answers are greedy; requests that arrive together share one judge call. "
        "See docs/serve.md.")
    model_flags.add_model_flags(serve)
    group = serve.add_argument_group("serving")
    group.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default: 127.0.0.1; any other needs --api-key-env)")
    group.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT})")
    group.add_argument("--served-model-name", default=None, metavar="NAME",
                       help="the model name /v1/models lists (default: the model folder's name); any name is answered")
    group.add_argument("--max-tokens", type=int, default=4096, metavar="N",
                       help="the most tokens an answer may take, whatever a request asks (default: 4096)")
    group.add_argument("--text-tokens", type=int, default=512, metavar="N",
                       help="a text answer's token budget when the request sets no max_tokens (default: 512)")
    group.add_argument("--max-items", type=int, default=Caps.items, metavar="N",
                       help=f"items of a JSON array whose schema sets no maxItems (default: {Caps.items}, as "
                            "localjudge's own steps; a schema's own bound is kept up to 200)")
    group.add_argument("--max-string", type=int, default=Caps.string, metavar="CHARS",
                       help=f"characters of a JSON string whose schema sets no maxLength (default: {Caps.string}, "
                            "as localjudge's own steps; a schema's own bound is kept up to 8000)")
    group.add_argument("--calibration", default=None, metavar="FILE",
                       help="a calibration file from bench --fit-calibration: /v1/score's results get calibrated_prob, "
                            "the chance of the positive label, where its map fits the scorer and judge")
    group.add_argument("--max-batch-rows", type=int, default=16, metavar="N",
                       help="the most requests one judge call answers (default: 16)")
    group.add_argument("--batch-window-ms", type=float, default=20.0, metavar="MS",
                       help="how long the first request waits for others to share its judge call (default: 20)")
    group.add_argument("--max-queue", type=int, default=256, metavar="N",
                       help="requests waiting at most; more are answered 429 with Retry-After (default: 256)")
    group.add_argument("--max-messages", type=int, default=256, metavar="N",
                       help="messages one request may hold (default: 256)")
    group.add_argument("--max-body-mb", type=float, default=4.0, metavar="MB",
                       help="the largest request body, in MiB (default: 4)")
    serve.set_defaults(func=run_serve)


def _positive(args: argparse.Namespace, name: str, *, integer: bool = True) -> None:
    value = getattr(args, name.replace("-", "_"))
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value < (1 if integer else 0) \
            or value > 1e9:
        raise CliError(f"--{name} must be a {'positive whole number' if integer else 'finite number >= 0'} "
                       f"of at most 1e9, got {value!r}")


def api_key(variable: str | None, host: str) -> str | None:
    """The key clients must send: read from the environment variable named, never printed. A host
    other than loopback needs one."""
    if variable is None:
        if not _loopback(host):
            raise CliError(f"--host {host} serves other machines: give --api-key-env VAR (the key clients must send)")
        return None
    key = os.environ.get(variable)
    if not key:
        raise CliError(f"--api-key-env {variable}: that environment variable is not set or empty")
    try:
        return check_credential(key, f"--api-key-env {variable}")  # the one secret rule (credentials.py)
    except CredentialError as error:
        raise CliError(str(error)) from None


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace) -> int:
    if args.engine not in LOCAL_ENGINES:
        raise CliError(f"localjudge serve runs a local engine ({' or '.join(LOCAL_ENGINES)}), not --engine "
                       f"{args.engine}")
    if args.model is None:
        raise CliError("localjudge serve needs --model, a local model directory or .gguf file")
    for name in ("port", "max-tokens", "text-tokens", "max-items", "max-string", "max-batch-rows", "max-queue",
                 "max-messages"):
        _positive(args, name)
    for name in ("batch-window-ms", "max-body-mb"):
        _positive(args, name, integer=False)
    if args.port > 65535:
        raise CliError(f"--port must be at most 65535, got {args.port}")
    if args.calibration:
        from localjudge.bench import load_calibration  # numpy: only with --calibration

        load_calibration(args.calibration)  # a bad file: one line, before the model loads
    key = api_key(args.api_key_env, args.host)
    args.api_key_env = None  # the key clients send here, not the server engine's option
    missing = [name for name in ("fastapi", "uvicorn") if importlib.util.find_spec(name) is None]
    if missing:
        raise CliError(f"localjudge serve needs {' and '.join(missing)}: pip install 'localjudge-evals[serve]'")
    import uvicorn
    spec = model_flags.judge_spec(args)
    spec.check()
    judge = model_flags.build_judge(args)
    name = args.served_model_name or os.path.basename(os.path.normpath(str(args.model))).removesuffix(".gguf")
    limits = Limits(max_body=int(args.max_body_mb * (1 << 20)), max_messages=args.max_messages,
                    max_tokens=args.max_tokens, text_tokens=args.text_tokens, max_rows=args.max_batch_rows,
                    window=args.batch_window_ms / 1000, max_queue=args.max_queue)
    url = f"http://{args.host}:{args.port}/v1"

    def ready() -> None:
        print(f"localjudge serve: {name} on {url} (Ctrl-C or SIGTERM: answers what is in flight, then exits)",
              file=sys.stderr, flush=True)

    calibrator = serve_calibration(args.calibration, judge.identity) if args.calibration else None
    caps = Caps(string=min(args.max_string, Caps.hard_string), items=min(args.max_items, Caps.hard_items))
    app = create_app(judge, served_name=name, api_key=key, limits=limits, caps=caps, on_start=ready,
                     calibrator=calibrator)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="debug" if args.debug else "warning",
                            timeout_graceful_shutdown=600, access_log=bool(args.debug))
    server = uvicorn.Server(config)
    server.run()
    return 0 if server.started else 2


def serve_calibration(path: str, judge: str) -> Any:
    """`--calibration FILE` for `/v1/score`: a scorer -> its map's `prob` (checked against the
    judge and the scorer's version), or the one line saying why no map applies to it."""
    from localjudge.bench import check_calibration, load_calibration

    calibration = load_calibration(path)
    if not any(fitted.judge == judge for fitted in calibration.maps.values()):
        raise CliError(f"{path}: no map in it was fitted for this judge ({judge}): fit one (localjudge bench "
                       "--fit-calibration)")

    def for_scorer(scorer: Any) -> Any:
        try:
            return check_calibration(calibration, [scorer])[scorer.name].prob
        except ValueError as error:
            return str(error)

    return for_scorer

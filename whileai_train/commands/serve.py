"""`whileai-train serve`: the dashboard page and the runs HTTP API over the local store, on one port
(uvicorn). Loopback by default; any other address needs a key (--api-key or WHILEAI_SERVER_KEY)."""

from __future__ import annotations

import argparse
import os
import socket
import sys

from whileai_train.server.defaults import API_KEY_ENV, DEFAULT_HOST, DEFAULT_PORT

__all__ = ["HELP", "add_arguments", "run"]

HELP = "serve the local store: a dashboard page at / and the runs HTTP API (POST /runs, /runs/ID/log, ...)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to bind (default {DEFAULT_HOST}: this machine only; any other needs a key)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--api-key", default=None,
                        help=f"key every request must carry as X-Api-Key (default: ${API_KEY_ENV})")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="another name clients reach this server by (the Host header is checked)")
    parser.add_argument("--open", action="store_true", help="open the dashboard in a browser")


def run(args: argparse.Namespace) -> int:
    from whileai_train.server.guard import is_loopback

    key = args.api_key or os.environ.get(API_KEY_ENV) or None
    if not is_loopback(args.host) and key is None:
        print(f"whileai-train serve: refusing to listen on {args.host}: anyone who can reach it could write "
              f"runs. Fix: pass --api-key KEY (or set {API_KEY_ENV}), or keep the default --host {DEFAULT_HOST}.",
              file=sys.stderr, flush=True)
        return 2

    import uvicorn

    from whileai_train.runs.store import LocalStore
    from whileai_train.server.api import RunsAPI
    from whileai_train.server.app import make_app

    store = LocalStore()
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        print(f"whileai-train serve: cannot listen on {args.host}:{args.port} ({exc.strerror}). "
              "Fix: pick another --port (0 picks a free one).", file=sys.stderr, flush=True)
        return 2
    sock.listen(128)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    app = make_app(RunsAPI(store, api_key=key), bound_host=args.host, allowed_hosts=tuple(args.allow_host))
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    print(f"whileai-train: serving {store.path} at {url} (Ctrl-C to stop)"
          + ("; requests need the API key" if key else ""), flush=True)
    if args.open:
        import webbrowser

        webbrowser.open(url)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0

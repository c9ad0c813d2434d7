"""`whileai-train serve`: the local store as a dashboard page and the runs HTTP API, on one port."""

from __future__ import annotations

import argparse

__all__ = ["HELP", "add_arguments", "run"]

HELP = "serve the local store: a dashboard page at / and the runs HTTP API (POST /runs, /runs/ID/log, ...)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")


def run(args: argparse.Namespace) -> int:
    from http.server import ThreadingHTTPServer

    from whileai_train.runs.store import LocalStore
    from whileai_train.server.api import RunsAPI, make_handler
    from whileai_train.server.dashboard import DASHBOARD_HTML

    store = LocalStore()
    server = ThreadingHTTPServer((args.host, args.port), make_handler(RunsAPI(store), DASHBOARD_HTML))
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(f"whileai-train: serving {store.path} at http://{host}:{port}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0

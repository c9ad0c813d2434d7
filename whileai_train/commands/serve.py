"""`whileai-train serve`: the dashboard page and the runs HTTP API over the local store, on one port
(uvicorn). Loopback by default; any other address needs a key (--api-key-file, WHILEAI_SERVER_KEY or
--api-key). With --ssl-certfile and --ssl-keyfile it speaks TLS itself; otherwise put a TLS proxy in front
of a server reachable from the network (the key travels in every request)."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path

from whileai_train.server.defaults import (
    API_KEY_ENV,
    DEFAULT_HOST,
    DEFAULT_PORT,
    HEADERS_TIMEOUT_S,
    KEEP_ALIVE_S,
    MAX_CONNECTIONS,
    MAX_HEADER_BYTES,
)

__all__ = ["HELP", "add_arguments", "run"]

HELP = "serve the local store: a dashboard page at / and the runs HTTP API (POST /runs, /runs/ID/log, ...)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to bind (default {DEFAULT_HOST}: this machine only; any other needs a key)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--api-key-file", default=None, metavar="PATH",
                        help=f"a file holding the key every request must carry as X-Api-Key (else ${API_KEY_ENV})")
    parser.add_argument("--api-key", default=None,
                        help="the key itself (visible to every user of this machine in `ps`: prefer "
                             f"--api-key-file or ${API_KEY_ENV})")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="another name clients reach this server by (the Host header is checked)")
    parser.add_argument("--ssl-certfile", default=None, metavar="PATH", help="serve TLS with this certificate (PEM)")
    parser.add_argument("--ssl-keyfile", default=None, metavar="PATH", help="the certificate's private key (PEM)")
    parser.add_argument("--open", action="store_true", help="open the dashboard in a browser")


def _fail(message: str) -> int:
    print(f"whileai-train serve: {message}", file=sys.stderr, flush=True)
    return 2


def _key(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """(the key or None, a problem to refuse on or None)."""
    if args.api_key_file:
        path = Path(args.api_key_file).expanduser()
        try:
            key = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            return None, f"cannot read the key file {path} ({type(exc).__name__}: {exc}). Fix: check the path"
        if not key:
            return None, f"the key file {path} is empty. Fix: write the key into it"
        return key, None
    if args.api_key:
        print(f"whileai-train serve: warning: --api-key puts the key on the command line, where every user of "
              f"this machine can read it (`ps`). Prefer --api-key-file PATH or ${API_KEY_ENV}.",
              file=sys.stderr, flush=True)
        return args.api_key, None
    return os.environ.get(API_KEY_ENV) or None, None


def run(args: argparse.Namespace) -> int:
    from whileai_train.server.guard import is_loopback

    key, problem = _key(args)
    if problem is not None:
        return _fail(problem)
    if not is_loopback(args.host) and key is None:
        return _fail(f"refusing to listen on {args.host}: anyone who can reach it could write runs. Fix: pass "
                     f"--api-key-file PATH (or set {API_KEY_ENV}), or keep the default --host {DEFAULT_HOST}.")
    if bool(args.ssl_certfile) != bool(args.ssl_keyfile):
        return _fail("TLS needs both --ssl-certfile and --ssl-keyfile")
    tls = bool(args.ssl_certfile)

    import uvicorn

    from whileai_train.runs.store import LocalStore
    from whileai_train.server.api import RunsAPI
    from whileai_train.server.app import make_app
    from whileai_train.server.connections import ConnectionWatch

    store = LocalStore()
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and without it
    # every answer on a kept-alive connection waits for the client's delayed ACK (about 40 ms)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        sock.close()
        return _fail(f"cannot listen on {args.host}:{args.port} ({exc.strerror}). Fix: pick another --port "
                     "(0 picks a free one).")
    sock.listen(128)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    url = f"{'https' if tls else 'http'}://{shown}:{port}/"
    watch = ConnectionWatch(max_connections=MAX_CONNECTIONS, headers_timeout_s=HEADERS_TIMEOUT_S)
    app = make_app(RunsAPI(store, api_key=key), bound_host=args.host, allowed_hosts=tuple(args.allow_host),
                   watch=watch, secure_cookie=tls)
    config = uvicorn.Config(app, http=watch.protocol_class(), log_level="warning", access_log=False,
                            lifespan="off", timeout_graceful_shutdown=2, timeout_keep_alive=KEEP_ALIVE_S,
                            h11_max_incomplete_event_size=MAX_HEADER_BYTES, proxy_headers=False,
                            ssl_certfile=args.ssl_certfile, ssl_keyfile=args.ssl_keyfile)
    try:
        config.load()
    except (OSError, ValueError) as exc:  # a missing or unreadable certificate or key
        sock.close()
        return _fail(f"cannot load the TLS certificate or key ({type(exc).__name__}: {exc}). Fix: check "
                     "--ssl-certfile and --ssl-keyfile (PEM files)")
    server = uvicorn.Server(config)
    print(f"whileai-train: serving {store.path} at {url} (Ctrl-C to stop)"
          + ("; requests need the API key" if key else ""), flush=True)
    if not tls and not is_loopback(args.host):
        print("whileai-train serve: warning: this server speaks plain HTTP off this machine, so the key crosses "
              "the network readable. Put a TLS proxy in front, or pass --ssl-certfile and --ssl-keyfile.",
              file=sys.stderr, flush=True)
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

"""Defaults for `whileai-train serve`, each with its source. The one place to change them."""

from __future__ import annotations

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "MAX_BODY_BYTES",
    "MAX_DEPTH",
    "MAX_ERROR_CHARS",
    "MAX_KEY_CHARS",
    "MAX_METRICS_PER_POINT",
    "MAX_NAME_CHARS",
    "MAX_NOTE_CHARS",
    "MAX_POINTS_PER_CALL",
    "MAX_POINTS_PER_PAGE",
    "MAX_RUNS_PER_PAGE",
    "MAX_SUMMARY_BYTES",
    "POINTS_PER_PAGE",
    "SESSION_COOKIE",
]

from whileai_train.runs.defaults import MAX_POINTS_PER_CALL

# Loopback only unless told otherwise: a server reachable from the network must carry a key (the
# project's rule for serve: any other address refuses to start without one).
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765

# The key `serve --api-key` reads when the flag is absent (named after the client's WHILEAI_API_KEY).
API_KEY_ENV = "WHILEAI_SERVER_KEY"

# A 500-point batch of 40 metrics is about 0.5 MB of JSON (measured with the client's encoder); 8 MB leaves
# room for wide metric sets and still bounds what one request can make the server hold.
MAX_BODY_BYTES = 8 * 1024 * 1024

# Product text, "run.note puts markdown (at most 8192 chars)".
MAX_NOTE_CHARS = 8192

# Names, ids and metric keys: generous for any real name, small enough that a page stays readable.
MAX_NAME_CHARS = 512
MAX_KEY_CHARS = 256
MAX_METRICS_PER_POINT = 1000
# A traceback's last lines fit; a whole log does not belong in a run's error field.
MAX_ERROR_CHARS = 16384
# A run summary (cost, monitor, holdout and delta blocks) is a few kB; 256 kB of JSON is far past any.
MAX_SUMMARY_BYTES = 256 * 1024
# JSON nesting: a summary block is 3-4 levels deep; past this a body is refused before it is walked.
MAX_DEPTH = 32

# Reading points: one page is enough for a chart; the page asks again with the cursor for more.
POINTS_PER_PAGE = 10_000
MAX_POINTS_PER_PAGE = 50_000
MAX_RUNS_PER_PAGE = 1000

# The cookie a browser gets after typing the key once on the page (HttpOnly, SameSite=Strict).
SESSION_COOKIE = "whileai_session"

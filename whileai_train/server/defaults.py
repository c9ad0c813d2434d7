"""Defaults for `whileai-train serve`, each with its source. The one place to change them."""

from __future__ import annotations

__all__ = [
    "API_KEY_ENV",
    "BODY_TIMEOUT_S",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "HEADERS_TIMEOUT_S",
    "KEEP_ALIVE_S",
    "MAX_BODY_BYTES",
    "MAX_CONNECTIONS",
    "MAX_DEPTH",
    "MAX_ERROR_CHARS",
    "MAX_HEADER_BYTES",
    "MAX_KEY_CHARS",
    "MAX_METRICS_PER_POINT",
    "MAX_METRICS_PER_RUN",
    "MAX_NAME_CHARS",
    "MAX_NOTES_PER_RUN",
    "MAX_NOTE_CHARS",
    "MAX_POINTS_PER_CALL",
    "MAX_POINTS_PER_PAGE",
    "MAX_RUNS_PER_PAGE",
    "MAX_SESSIONS",
    "MAX_SUMMARY_BYTES",
    "MAX_SUMMARY_DIGEST_CHARS",
    "MAX_SUMMARY_DIGEST_KEYS",
    "PARSE_INLINE_BYTES",
    "PARSE_WORKERS",
    "POINTS_PER_PAGE",
    "SESSION_ATTEMPTS",
    "SESSION_ATTEMPTS_WINDOW_S",
    "SESSION_COOKIE",
    "SESSION_MAX_BODY_BYTES",
    "SESSION_TTL_S",
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

# A note is markdown of at most 8192 characters: the platform's cap, kept here so a note that lands locally
# would land on the platform too.
MAX_NOTE_CHARS = 8192

# Names, ids and metric keys: generous for any real name, small enough that a page stays readable.
MAX_NAME_CHARS = 512
MAX_KEY_CHARS = 256
MAX_METRICS_PER_POINT = 1000
# Distinct metric names in one run (past it, 409 naming the cap). TRL's GRPO logs about 30, a reward monitor
# and GPU metrics a few dozen more; a thousand is far past any real run and keeps its page usable.
MAX_METRICS_PER_RUN = 1000
# Notes in one run (each at most MAX_NOTE_CHARS): the reward monitor writes one per alarm.
MAX_NOTES_PER_RUN = 1000
# A traceback's last lines fit; a whole log does not belong in a run's error field.
MAX_ERROR_CHARS = 16384
# A run summary (cost, monitor, holdout and delta blocks) is a few kB; 256 kB of JSON is far past any. It
# bounds the stored summary of a run, whatever the number of PATCHes that built it.
MAX_SUMMARY_BYTES = 256 * 1024
# GET /runs (the page polls it every second) carries a digest of each summary: its top-level numbers, flags
# and texts (cut to MAX_SUMMARY_DIGEST_CHARS), at most MAX_SUMMARY_DIGEST_KEYS of them; GET /runs/{id} has all.
MAX_SUMMARY_DIGEST_KEYS = 32
MAX_SUMMARY_DIGEST_CHARS = 200
# JSON nesting: a summary block is 3-4 levels deep; past this a body is refused before it is walked.
MAX_DEPTH = 32

# Reading points: one page is enough for a chart; the page asks again with the cursor for more.
POINTS_PER_PAGE = 10_000
MAX_POINTS_PER_PAGE = 50_000
MAX_RUNS_PER_PAGE = 1000

# -- connections (server/connections.py, the Guard) ----------------------------------------------------
# A connection must complete a request's headers within this many seconds of opening, or of its last answer,
# else it is closed: one that sends nothing or half its headers (slowloris) holds no file handle for good.
# nginx's client_header_timeout is 60 s for the open internet; the clients here (the library, the page,
# scripts) send each request's headers at once, so 10 s is generous.
HEADERS_TIMEOUT_S = 10.0
# A request's declared body must have arrived whole this many seconds after its headers, else 408 and the
# connection is closed. The 8 MB cap below then needs 280 kB/s; a 500-point batch (about 0.5 MB) needs 17 kB/s.
BODY_TIMEOUT_S = 30.0
# An idle kept-alive connection is closed this many seconds after its last answer (uvicorn's own default,
# stated here; the page polls every second, so its connection stays open).
KEEP_ALIVE_S = 5
# Open connections at once. Past it the connection idle longest (between requests, or still sending its
# headers) is closed to make room; when every one is mid-request the new one is refused. HTTP/1.1 serves one
# request per connection at a time, so this also caps requests in flight. Far below the usual limit of 1024
# open files (the store's SQLite files take three per worker thread, 40 threads).
MAX_CONNECTIONS = 100
# Request line and headers together: h11's own default (h11.DEFAULT_MAX_INCOMPLETE_EVENT_SIZE), stated here;
# past it the request is answered 400 and the connection closed.
MAX_HEADER_BYTES = 16 * 1024
# Bodies larger than PARSE_INLINE_BYTES are parsed on this many worker threads, never on the event loop;
# one, so that a parse (which holds the GIL through its C calls) never doubles what the event loop waits for
# while large bodies arrive. A body up to 64 kB is parsed where it arrives: about 0.3 ms (measured, orjson and
# the depth check), less than handing it to a thread and back costs.
PARSE_WORKERS = 1
PARSE_INLINE_BYTES = 64 * 1024

# -- the dashboard's key form (server/sessions.py) ---------------------------------------------------
# The cookie a browser gets after typing the key once on the page (HttpOnly, SameSite=Strict).
SESSION_COOKIE = "whileai_session"
# A session lasts a working day, then the key is asked for again; sessions live in the server's memory only,
# so a restart forgets them all. At most MAX_SESSIONS at once (the oldest goes first).
SESSION_TTL_S = 12 * 3600
MAX_SESSIONS = 1000
# The key form takes a small JSON body ({"key": "..."}); anything larger is refused before it is read.
SESSION_MAX_BODY_BYTES = 4096
# Wrong keys: SESSION_ATTEMPTS per address in any SESSION_ATTEMPTS_WINDOW_S, then 429 with Retry-After
# (OWASP's authentication guidance: limit failed attempts; 10 a minute stops guessing, not typing).
SESSION_ATTEMPTS = 10
SESSION_ATTEMPTS_WINDOW_S = 60.0

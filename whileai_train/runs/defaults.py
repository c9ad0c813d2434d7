"""Defaults for runs, the sender and cost, each with its source. The one place to change them."""

from __future__ import annotations

__all__ = [
    "BACKOFF_BASE_S",
    "BACKOFF_MAX_S",
    "CHECKPOINT_FLUSH_WAIT_S",
    "CONNECT_TIMEOUT_S",
    "DEFAULT_API_URL",
    "FINISH_WAIT_S",
    "FLUSH_INTERVAL_S",
    "GPU_PRICE_DATE",
    "GPU_PRICE_SOURCE",
    "GPU_USD_PER_HOUR",
    "MAX_COMPLETIONS_PER_RUN",
    "MAX_COMPLETION_CHARS",
    "MAX_POINTS_PER_CALL",
    "MAX_SEQ",
    "OPEN_TIMEOUT_S",
    "READ_TIMEOUT_S",
    "REQUEST_DEADLINE_S",
    "RETRY_AFTER_MAX_S",
    "STORE_BUSY_TIMEOUT_S",
    "SYNC_DEADLINE_S",
]

# The platform's plain HTTP API takes up to 500 points a call.
MAX_POINTS_PER_CALL = 500

# Holdout completions kept per run (prompt and completion text, proxy, gold, tool calls, markers): 32 evals of the
# monitor's default 32 asks x 4 completions (callbacks/monitor_defaults.py N_PROMPTS, K). With the character cap
# below that bounds a run's completions to about 32 MB of text in the store however long it trains; rows past
# it are counted (on the run and in the monitor summary), never stored.
MAX_COMPLETIONS_PER_RUN = 4096

# Characters kept of each prompt and each completion: 4x TRL's default max_completion_length (256 tokens,
# GRPOConfig) at about 4 characters a token, so a default-length completion is kept whole; a longer one is cut
# here, marked cut, and counted.
MAX_COMPLETION_CHARS = 4000

# The largest sequence number of a point or note: 2^53 - 1, JavaScript's Number.MAX_SAFE_INTEGER, so a seq
# stays exact on the page. A resumed run starts at microseconds since 1970 (about 1.8e15), far below it.
MAX_SEQ = 2**53 - 1

# A process killed mid-run loses at most the last flush interval, <= 1 s.
FLUSH_INTERVAL_S = 1.0

# `finish` flushes with a bounded wait of 10 s, then leaves the rest in the spool.
FINISH_WAIT_S = 10.0

# How long WhileCallback waits at a checkpoint for the sink to take what was logged before it (only while
# points are owed). A checkpoint already stops training to write the model; 10 s is the finish wait above,
# and it fits inside the 30 s a preempted container gets between SIGTERM and SIGKILL (Kubernetes' default
# terminationGracePeriodSeconds; Modal's preemption grace period).
CHECKPOINT_FLUSH_WAIT_S = 10.0

# How long a write to the local store waits for a lock another process holds (SQLite's busy timeout). The
# store's writes are short transactions; 10 s is the finish wait above, and the run's own store waits at most
# min(this, the finish wait) so a lock never stretches a finish past its bound.
STORE_BUSY_TIMEOUT_S = 10.0

# Short timeouts: a log POST of 500 points is ~100 kB; 5 s covers a slow link, and a hanging
# server costs the background thread at most this long per try, never the training thread.
CONNECT_TIMEOUT_S = 2.0
READ_TIMEOUT_S = 5.0

# Those two bound each wait on the socket; this bounds a whole request (connect, send, the answer's last
# byte), so a server that answers a byte a second holds it no longer. The finish wait is 10 s: one request
# fits in it, and a batch that misses it stays in the spool.
REQUEST_DEADLINE_S = 10.0

# The most `run()` makes the training thread wait for `POST /runs` (the send thread opens the run; past
# this the run goes on under its client id, its points queued, and the open finishes in the background).
# Open happens once, at train begin, so a short wait there costs nothing per step.
OPEN_TIMEOUT_S = 3.0

# The most one `whileai-train sync` takes, every spool file together: what it has not sent by then stays
# in the spool for the next sync (re-sent points are de-duplicated). 50k points take seconds on loopback.
SYNC_DEADLINE_S = 300.0

# Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter", 2015):
# sleep ~ U(0.5, 1.5) x min(BACKOFF_MAX_S, BACKOFF_BASE_S x 2^failures).
BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 30.0

# A 429's Retry-After is honoured up to this many seconds (RFC 9110 s10.2.3 leaves the cap to the client).
RETRY_AFTER_MAX_S = 120.0

# The platform's API when WHILEAI_API_URL is not set. Assumption: the site is while.ai and its API host is not
# published; override with WHILEAI_API_URL or url=.
DEFAULT_API_URL = "https://api.while.ai"

# Modal's on-demand list price (modal.com/pricing), USD per GPU-hour, read 2026-09-20
# (whileai.simulations.defaults.GPU_USD_PER_HOUR in the reference SDK).
GPU_USD_PER_HOUR: dict[str, float] = {
    "A10G": 1.10,
    "L40S": 1.95,
    "H100": 3.95,
    "A100": 2.50,
    "T4": 0.59,
}
GPU_PRICE_SOURCE = "modal.com/pricing"
GPU_PRICE_DATE = "2026-09-20"

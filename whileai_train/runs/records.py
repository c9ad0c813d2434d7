"""A run's record read back, wherever it went: the local store, else the platform's HTTP API.

    get_run(run_id)                          status, summary, points, notes: the local store, else the platform
    local_store_with(run_id)                 the local store when it holds the run (completions read there)
    platform_get(path, params, ...)          one GET for a run the local store does not hold (its JSON object)
    platform_client / platform_error         the client every call to the platform opens, and its error's words

What is kept on a run after training (summary["holdout"], summary["delta"], run.refresh()) is verdicts.py's.

Each call to the platform, all its requests together, ends within the request deadline
(SenderConfig.request_deadline_s, WHILEAI_REQUEST_DEADLINE_S; a live run's own config for run.refresh() and
run.holdout), not per read: a platform that answers a byte a second cannot hold it (runs/deadline.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from whileai_train.errors import ConfigError, RunError
from whileai_train.runs.config import SenderConfig, api_url
from whileai_train.runs.credentials import Credential, redact, resolve_credential
from whileai_train.runs.store import LocalStore, default_store_path

__all__ = [
    "get_run",
    "local_store_with",
    "platform_client",
    "platform_credential",
    "platform_error",
    "platform_get",
    "platform_record",
]


@contextlib.contextmanager
def platform_client(credential: Credential, url: str | None, config: SenderConfig | None) -> Iterator[Any]:
    """A client for one call to the platform; every request made in the block ends by one deadline."""
    from whileai_train.runs.deadline import deadline_client, request_deadline

    config = config if config is not None else SenderConfig.from_env()
    client = deadline_client(api_url(url), {"X-Api-Key": credential.key},
                             connect_timeout_s=config.connect_timeout_s, read_timeout_s=config.read_timeout_s)
    with client, request_deadline(config.request_deadline_s):
        yield client


def platform_error(what: str, exc: Exception | str, credential: Credential | None, config: SenderConfig | None,
                   url: str | None) -> RunError:
    """The RunError for a call to the platform that failed: a deadline passed says which and the fix; the key
    never shows."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        limit = (config if config is not None else SenderConfig.from_env()).request_deadline_s
        return RunError(redact(f"{what}: no whole answer from {api_url(url)} within {limit:g} s ({exc}). Fix: try "
                               "again when the platform answers, or raise WHILEAI_REQUEST_DEADLINE_S", credential))
    return RunError(redact(f"{what}: {exc}", credential))


def get_run(run_id: str, *, api_key: str | None = None, url: str | None = None) -> dict[str, Any]:
    """The run record (status, summary, points, notes, ...) from the local store, else the platform API."""
    if not isinstance(run_id, str) or not run_id:
        raise ConfigError(f"run_id={run_id!r}: pass the run's id (run.id, or `whileai-train runs`)")
    store = local_store_with(run_id)
    if store is not None:
        record = store.get_run(run_id) or {}
        record["points"] = store.points(run_id)
        record["where"] = "local"
        return _with_context(record)
    return _with_context(platform_record(run_id, platform_credential(run_id, api_key), url, with_points=True))


def local_store_with(run_id: str) -> LocalStore | None:
    """The local store when it holds `run_id`, else None (the run is on the platform, or nowhere). Reading never
    creates the store."""
    store = LocalStore() if default_store_path().exists() else None
    return store if store is not None and store.has_run(run_id) else None


def platform_credential(run_id: str, api_key: str | None) -> Credential:
    """The key to look for a run the local store does not hold on the platform; else a RunError with the fix."""
    credential = resolve_credential(api_key)
    if credential is None:
        raise RunError(f"no run {run_id!r} in the local store ({default_store_path()}) and no platform key to look "
                       "further. Fix: pass the id `whileai-train runs` lists, or api_key=")
    return credential


def platform_get(path: str, params: Mapping[str, Any], *, api_key: str | None, url: str | None,
                 missing: str) -> dict[str, Any]:
    """GET `path` on the platform, for a run the local store does not hold: its JSON object, or a RunError
    saying what came back (no key, no such run, a redirect, not JSON)."""
    import httpx

    credential = platform_credential(missing, api_key)
    try:
        with platform_client(credential, url, None) as client:
            response = client.get(path, params=dict(params))
    except httpx.HTTPError as exc:
        raise platform_error(f"GET {path} failed", exc, credential, None, url) from None
    if response.status_code == 404:
        raise RunError(f"no run {missing!r} at {api_url(url)} (GET {path} answered 404)")
    if response.status_code >= 300:
        raise RunError(f"GET {path} answered HTTP {response.status_code}"
                       + (" (the key was refused)" if response.status_code in (401, 403) else ""))
    try:
        answer = response.json()
    except ValueError as exc:
        raise RunError(f"GET {path} answered something that is not JSON ({exc})") from None
    if not isinstance(answer, dict):
        raise RunError(f"GET {path} answered {type(answer).__name__}, not a JSON object")
    return answer


def _with_context(record: dict[str, Any]) -> dict[str, Any]:
    """The run's context (runs/context.py) at the top of the record: context, project, group, tags."""
    found = record.get("summary")
    summary: dict[str, Any] = found if isinstance(found, dict) else {}
    inner = summary.get("context")
    context: dict[str, Any] = inner if isinstance(inner, dict) else {}
    record["context"] = context
    for key in ("project", "group"):
        record[key] = context.get(key) or summary.get(key)
    record["tags"] = list(context.get("tags") or [])
    return record


def platform_record(run_id: str, credential: Credential, url: str | None, *, with_points: bool,
                    config: SenderConfig | None = None) -> dict[str, Any]:
    """GET /runs/{id} (and its points): the record as the platform holds it, or a RunError saying what came back."""
    import httpx

    listed = None
    try:
        with platform_client(credential, url, config) as client:
            response = client.get(f"/runs/{run_id}")
            if response.status_code == 404:
                raise RunError(f"no run {run_id!r} at {api_url(url)}")
            if 300 <= response.status_code < 400:
                raise RunError(f"GET /runs/{run_id} was redirected to {response.headers.get('location')!r}; a "
                               f"redirect is never followed. Fix: point url= at the API itself ({api_url(url)})")
            response.raise_for_status()
            record = response.json()
            if with_points:
                listed = _all_points(client, run_id)
    except httpx.HTTPError as exc:
        raise platform_error(f"GET /runs/{run_id} failed", exc, credential, config, url) from None
    except ValueError as exc:
        raise RunError(f"GET /runs/{run_id} answered something that is not JSON ({exc})") from None
    if not isinstance(record, dict):
        raise RunError(f"GET /runs/{run_id} answered {type(record).__name__}, not a run record")
    if isinstance(listed, list):
        record["points"] = listed
    record["where"] = "platform"
    return record


def _all_points(client: Any, run_id: str) -> list[Any] | None:
    """Every page of GET /runs/{id}/points, following next_after_seq until the server says the end (None).
    A cursor that does not move forward is a server that lies: RunError, not a loop."""
    points: list[Any] = []
    cursor: int | None = None
    while True:
        response = client.get(f"/runs/{run_id}/points", params={} if cursor is None else {"after_seq": cursor})
        response.raise_for_status()
        page = response.json()
        if not isinstance(page, dict) or not isinstance(page.get("points"), list):
            return points or None
        points.extend(page["points"])
        following = page.get("next_after_seq")
        if following is None:
            return points
        if not isinstance(following, int) or (cursor is not None and following <= cursor) or not page["points"]:
            raise RunError(f"GET /runs/{run_id}/points answered the cursor {following!r} after {cursor!r}, which "
                           "does not move forward; the points read so far are not the whole run")
        cursor = following

"""Schema fuzzing: schemathesis generates requests from the app's own OpenAPI schema (valid and invalid
bodies, query and path values, in both modes) and sends them to the ASGI app over a real SQLite store.
No input may answer 5xx. Examples are bounded per operation so the whole run stays well under a minute."""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings

from whileai_train.runs.store import LocalStore
from whileai_train.server.api import RunsAPI
from whileai_train.server.app import make_app

_DIR = Path(tempfile.mkdtemp(prefix="whileai-fuzz-"))
_STORE = LocalStore(_DIR / "runs.db")
_OPEN = _STORE.create_run({"name": "fuzzed open run", "total_steps": 10})
_FINISHED = _STORE.create_run({"name": "fuzzed finished run"})
_STORE.finish(_FINISHED, "done", {"cost_usd": 0.1})
APP = make_app(RunsAPI(_STORE), allowed_hosts=("testserver",))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_input_answers_5xx(case: schemathesis.Case) -> None:
    response = case.call(headers={"Host": "testserver"})
    assert response.status_code < 500, (case.method, case.path, response.status_code, response.text[:300])
    if case.path_parameters and "run_id" in case.path_parameters:
        for real in (_OPEN, _FINISHED):  # the same input against runs that exist, open and finished
            case.path_parameters["run_id"] = real
            again = case.call(headers={"Host": "testserver"})
            assert again.status_code < 500, (case.method, case.path, again.status_code, again.text[:300])

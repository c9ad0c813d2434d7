"""`import whileai_train` is cheap: no torch, no trl, under 300 ms."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = (
    "import json, sys, time\n"
    "t = time.perf_counter()\n"
    "import whileai_train\n"
    "elapsed = time.perf_counter() - t\n"
    "print(json.dumps({'s': elapsed, 'torch': 'torch' in sys.modules, 'trl': 'trl' in sys.modules,"
    " 'transformers': 'transformers' in sys.modules}))\n"
)


def _probe() -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_no_torch_or_trl() -> None:
    result = _probe()
    assert result["torch"] is False
    assert result["trl"] is False
    assert result["transformers"] is False


def test_import_is_under_300_ms() -> None:
    # best of three cold processes: the first may pay for filesystem caches
    best = min(_probe()["s"] for _ in range(3))
    assert best < 0.3, f"import whileai_train took {best * 1000:.0f} ms"

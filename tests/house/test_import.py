"""`import whileai_train` is cheap: it loads neither torch, trl nor transformers (bench/import_time.py times it)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = (
    "import json, sys\n"
    "import whileai_train\n"
    "print(json.dumps({'torch': 'torch' in sys.modules, 'trl': 'trl' in sys.modules,"
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

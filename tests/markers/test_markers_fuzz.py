"""Any JSON a row file can hold: the trajectory markers either read it or raise a RowError naming the row."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import whileai_train as wai
from whileai_train.errors import RowError

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
steps = st.lists(st.one_of(
    st.fixed_dictionaries({"tool": st.sampled_from(["bash", "read_file", "edit_file", "issue_refund", "x"])},
                          optional={"arguments": json_values | st.text(max_size=30), "result": json_values,
                                    "text": json_values}),
    st.fixed_dictionaries({"user": json_values}), st.fixed_dictionaries({"text": json_values}), json_values),
    max_size=4)
rows = st.fixed_dictionaries({}, optional={"prompt": json_values, "steps": steps | json_values,
                                           "final_text": json_values, "markers": json_values,
                                           "messages": st.lists(json_values, max_size=3)})


@settings(max_examples=300, deadline=None)
@given(rows)
def test_any_row_is_read_or_named(row: dict[str, Any]) -> None:
    for stamp in (wai.trace_markers, wai.mark_grounding, wai.style_markers):
        try:
            (out,) = stamp([row])
        except RowError as exc:
            assert exc.index == 0 and "Fix:" in str(exc)
        else:
            assert all(value in (0.0, 1.0) for key, value in out["markers"].items()
                       if not isinstance(row.get("markers"), dict) or key not in row["markers"])

"""AppTest helpers shared by the app tests: a fresh app, its metrics, errors and figures."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np

from ui import datasets as D
from ui import state as S

REPO = Path(__file__).resolve().parents[2]


APP = REPO / "app.py"


# ---------------------------------------------------------------------- helpers for the page tests
def new_app(timeout: float = 60):
    """A fresh, unrun AppTest of app.py (long timeout: cold imports of scipy/plotly)."""
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(APP), default_timeout=timeout)


def public_app(public_fraction: float = 0.05, timeout: float = 60):
    """A fresh, unrun AppTest whose current data is the default table with a *declared-public* subset
    (the default publishes no rows; tests of the publishable-points mechanisms need some)."""

    at = new_app(timeout)
    spec = {**D.DEFAULT_SPEC, "public_fraction": public_fraction, "public_declared": True}
    ds = D.build_dataset(spec)
    for key, value in {S.DATASET: ds, S.LENGTHSCALE: float(ds.suggested_lengthscale),
                       S.LENGTHSCALE_SOURCE: "suggested", S.Q_SCALE: float(ds.q_scale),
                       "data.public_pct": 100.0 * public_fraction, "data.public_declared": True}.items():
        at.session_state[key] = value
    return at


def ok(at) -> None:
    """No exception box and no error message on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metric(at, label_start: str) -> str:
    """Value of the first metric whose label starts with ``label_start``."""
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}; have {[m.label for m in at.metric]}")


def as_float(text: str) -> float:
    return float(text.replace(",", "").replace("ε = ", "").strip())


def decode(a):
    """Plotly 7 array (``{"dtype", "bdata"}``) or list -> numpy array."""
    if isinstance(a, dict) and "bdata" in a:
        return np.frombuffer(base64.b64decode(a["bdata"]), dtype=a["dtype"])
    return np.asarray(a)


def plotly_figures(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def errors(at) -> str:
    return " | ".join(e.value for e in at.error)



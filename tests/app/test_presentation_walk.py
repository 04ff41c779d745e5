"""Issue 24: owner-only views are a type, not a convention (AppTest).

Everything a page computes from the private (or held-out) rows for the owner's eyes is wrapped in
:class:`ui.presentation.OwnerOnly` and drawn through its ``render``, which in presentation mode draws a note instead.
One session makes results of several kinds as the owner (a Release-page release at the defaults, repeat draws, a
Clustering run, a private-vs-held-out two-sample test, privacy-utility curves on the private rows) and reads the owner
values they show; then presentation mode is turned on and **every page** is visited: no exception, no owner view
drawn (a spy on ``OwnerOnly.render``), a note in their place, and none of the owner values anywhere on the screen
(text, metrics, data frames, figures' private rows).
"""

from __future__ import annotations

import base64
import json

import numpy as np

from tests.support.app import metric, ok, public_app
from ui import presentation as P
from ui import state as S

#: Every page of app.py.
PAGES = ("pages/home.py", "pages/data.py", "pages/kernel.py", "pages/release.py", "pages/curves.py", "pages/use.py",
         "pages/twosample.py", "pages/clustering.py", "pages/generative.py", "pages/ledger.py", "pages/audit.py")


def follow(at, page: str):
    """Switch pages, then let later runs continue where the app is (see tests/test_app_presentation.py)."""
    at.switch_page(page).run()
    at._page_hash = ""
    return at


def screen(at) -> str:
    """Everything a viewer reads: texts, metrics (label, value, help), data frames (header and cells), expanders."""
    parts = [e.value for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "success",
                                  "error", "text") for e in getattr(at, kind)]
    parts += [f"{m.label} {m.value} {m.proto.help}" for m in at.metric]
    parts += [d.value.to_string() for d in at.dataframe]
    parts += [e.label for e in at.expander]
    return "\n".join(str(p) for p in parts)


def _n(values) -> int:
    """Number of points of a plotly trace's coordinate (a list, or plotly 6's typed array ``{"bdata": ...}``)."""
    if values is None:
        return 0
    if isinstance(values, dict):
        raw = base64.b64decode(values.get("bdata", ""))
        return len(raw) // max(1, {"f8": 8, "f4": 4, "i4": 4, "i8": 8, "i2": 2, "i1": 1}.get(values.get("dtype"), 8))
    return len(values)


def private_traces(at) -> list[str]:
    """Names of plotted traces that draw private rows (or their local view) with at least one point."""
    out = []
    for el in at.get("plotly_chart"):
        for tr in json.loads(el.proto.spec).get("data", []):
            name = str(tr.get("name", ""))
            if ("private rows" in name.lower() or "LOCAL VIEW" in name) and max(_n(tr.get("x")), _n(tr.get("y"))):
                out.append(name)
    return out


def test_presentation_mode_walks_every_page_and_shows_no_owner_value(monkeypatch):
    calls = []
    original = P.OwnerOnly.render

    def spy(self, draw):
        drawn = original(self, draw)
        calls.append((self.what, bool(drawn), P.is_on()))
        return drawn

    monkeypatch.setattr(P.OwnerOnly, "render", spy)

    # ------------------------------------------------------------------ owner mode: results of several kinds
    at = public_app(timeout=120).run()
    ok(at)
    follow(at, "pages/release.py")
    at.button(key="rel.go").click().run()                       # a release at the defaults
    ok(at)
    at.number_input(key=S.N_REPEATS).set_value(2).run()
    at.button(key="rel.repeat").click().run()                   # repeat draws
    ok(at)
    rec = at.session_state[S.RELEASES][0]
    owner = {"RKHS distance of this release": metric(at, "RKHS distance of this release")}
    assert "The draws next to the private embedding" not in screen(at)
    assert "Private vs released embedding" in screen(at)

    follow(at, "pages/clustering.py")
    at.number_input(key="clu.k").set_value(3).run()
    at.number_input(key="clu.T").set_value(2).run()
    at.select_slider(key="clu.J").set_value(200).run()
    at.button(key="clu.go").click().run()                       # a clustering run
    ok(at)
    owner["ARI vs non-private"] = metric(at, "ARI vs non-private")
    owner["Objective vs non-private"] = metric(at, "Objective vs non-private")

    follow(at, "pages/twosample.py")
    at.radio(key="tst.mode").set_value("one").run()
    at.radio(key="tst.source").set_value("groups").run()
    at.button(key="tst.go").click().run()                       # private rows vs held-out rows
    ok(at)
    owner["Non-private p (owner only)"] = metric(at, "Non-private p (owner only)")

    follow(at, "pages/curves.py")
    at.number_input(key="crv.n_eps").set_value(2).run()
    at.number_input(key="crv.reps").set_value(1).run()
    at.number_input(key="crv.m_max").set_value(50).run()
    at.button(key="crv.go").click().run()                       # curves on the private rows
    ok(at)
    assert [d for d in at.dataframe if "distance" in d.value.columns]

    follow(at, "pages/use.py")
    ok(at)
    owner["MMD(private data, held-out) — owner only"] = metric(at, "MMD(private data, held-out) — owner only")
    means = next(d.value for d in at.dataframe if "true private mean" in d.value.columns)
    assert calls and all(drawn for _, drawn, on in calls if not on)       # the owner sees every owner view

    # ------------------------------------------------------------------ presentation mode: every page
    calls.clear()
    at.session_state[P.PRESENT] = True
    seen, metrics, frames = {}, {}, {}
    for page in PAGES:
        follow(at, page)
        ok(at)
        seen[page] = screen(at)
        metrics[page] = list(at.metric)
        frames[page] = [d.value for d in at.dataframe]
        assert not private_traces(at), (page, private_traces(at))
    shown = "\n".join(seen.values())
    asked = {what for what, _, _ in calls}
    assert not [c for c in calls if c[1]], [c for c in calls if c[1]]     # none drawn
    assert all(on for _, _, on in calls)
    assert len(asked) >= 8, asked                                           # the walk met the owner views
    for what in ("How close the release is to the private data (RKHS distances)",
                 "The private embedding next to the released one", "The draws next to the private embedding",
                 "The distances of each release to the private data",
                 "The owner's evaluation of the clustering against the private rows",
                 "The non-private reference test on the private samples",
                 "The privacy–utility curves computed on the private rows", "The true private mean of each column",
                 "The MMD between the private rows and the held-out rows",
                 "The preview of the private rows (plot, table and exact statistics)"):
        assert what in asked, what
        assert f"{what} — hidden in presentation mode" in shown, what   # a note where it was
    # none of the owner values (their labels, the numbers the owner saw) reaches the screen
    for label in owner:
        assert label not in shown, label
    values = {page: [m.value for m in ms] for page, ms in metrics.items()}
    assert owner["RKHS distance of this release"] not in values["pages/release.py"] + values["pages/home.py"]
    assert owner["ARI vs non-private"] not in values["pages/clustering.py"]
    assert owner["Non-private p (owner only)"] not in values["pages/twosample.py"]
    assert owner["MMD(private data, held-out) — owner only"] not in values["pages/use.py"]
    assert repr(float(rec.metrics["distance"])) not in shown
    assert "Private rows N" not in shown                                    # the data page's preview
    assert not [c for fs in frames.values() for f in fs for c in map(str, f.columns)
                if c.startswith(("true", "error")) or c in ("RKHS distance", "L2 error on grid", "distance")]
    truth = np.asarray(means["true private mean"], dtype=float)
    for frame in frames["pages/use.py"]:                                     # no column holds the private means
        for col in frame.columns:
            vals = np.asarray(frame[col])
            if vals.shape == truth.shape and np.issubdtype(vals.dtype, np.number):
                assert not np.allclose(vals.astype(float), truth, rtol=1e-9, atol=0), col
    assert "RKHS distance of this release" not in seen["pages/release.py"]
    assert "ε spent" in seen["pages/release.py"]                           # public facts stay
    assert "p-value (private test)" in seen["pages/twosample.py"]           # the private test's p-value is public
    assert "What is released" in seen["pages/clustering.py"]                # released centres and noisy sizes stay

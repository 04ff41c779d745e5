"""Plotly figure builders (pure functions of arrays: no Streamlit, no private-data decisions)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .numbers import fmt_power

PRIVATE_COLOR = "rgba(120, 120, 120, 0.25)"
PUBLIC_COLOR = "#1f77b4"
POS_SYMBOL, NEG_SYMBOL = "circle", "diamond"
WEIGHT_SCALE = "RdBu"
MAX_PLOTTED = 4000  # private points drawn (a random subset beyond this, for speed)

_LAYOUT = dict(margin=dict(l=10, r=10, t=40, b=10),
               legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0))


#: The one type size of every figure (px): large enough to read on a projector from the back of a lecture room
#: (Plotly's own default is 12). :data:`PRESENT_FONT_SIZE` in presentation mode.
FONT_SIZE = 15
PRESENT_FONT_SIZE = 20


def _fmt_tick(v: float, plain: bool) -> str:
    if plain:
        return f"{v:,.10g}"                        # 0.001, 0.5, 1, 20, 1,000, 50,000
    return fmt_power(v)


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Tick positions and labels of a log axis showing ``[lo, hi]``: whole numbers, never Plotly's bare digits.

    Plotly labels a log axis that spans less than a few decades with the leading digit alone ("5 6 7 8 9 1 2 3 4
    5"), which nobody can read off a projector. Here: one tick per decade (every few decades beyond eight) when the
    data span two decades or more, else the 1-2-5 sequence (1-2-…-9 on a very short span), each labelled with its
    full value -- plain (``0.01``, ``1``, ``1,000``) between 10⁻³ and 10⁶, else powers of ten (``10⁻⁶``) for the whole axis.
    """
    lo, hi = float(min(lo, hi)), float(max(lo, hi))
    k0, k1 = int(np.floor(np.log10(lo) + 1e-9)), int(np.ceil(np.log10(hi) - 1e-9))
    k1 = max(k1, k0 + 1)

    def within(vals):
        return [v for v in vals if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)]

    decades = [10.0 ** k for k in range(k0, k1 + 1)]
    if len(within(decades)) >= 3:
        step = int(np.ceil(len(decades) / 8))
        ticks = decades[::step]
    else:
        ticks = [m * 10.0 ** k for k in range(k0, k1 + 1) for m in (1, 2, 5)]
        if len(within(ticks)) < 3:
            ticks = [m * 10.0 ** k for k in range(k0, k1 + 1) for m in range(1, 10)]
        ticks = [float(f"{t:.12g}") for t in ticks]
    plain = all(1e-3 <= t <= 1e6 for t in within(ticks) or ticks)
    return ticks, [_fmt_tick(t, plain) for t in ticks]


def _positive(values) -> np.ndarray:
    if values is None:
        return np.empty(0)
    try:
        a = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError, OverflowError):
        return np.empty(0)
    return a[np.isfinite(a) & (a > 0)]


def _log_axis_span(fig: go.Figure, name: str) -> tuple[float, float] | None:
    """The positive data range drawn on axis ``name`` (``"xaxis"``, ``"yaxis2"``...), or its fixed range."""
    axis = fig.layout[name]
    if axis.range is not None and None not in tuple(axis.range):
        a, b = (10.0 ** float(r) for r in axis.range)
        return min(a, b), max(a, b)
    letter, ref = name[0], name[0] + name[5:]
    parts = []
    for tr in fig.data:
        if (getattr(tr, f"{letter}axis", None) or letter) != ref or letter not in tr:
            continue
        parts.append(_positive(tr[letter]))
    for shape in fig.layout.shapes or ():
        if shape[f"{letter}ref"] == ref:
            parts.append(_positive([shape[f"{letter}0"], shape[f"{letter}1"]]))
    vals = np.concatenate(parts) if parts else np.empty(0)
    if not vals.size:
        return None
    return float(vals.min()), float(vals.max())


def themed(fig: go.Figure, *, presentation: bool = False) -> go.Figure:
    """The one layout every figure of the app is drawn with (``ui.charts.plotly_chart`` applies it).

    * Type of :data:`FONT_SIZE` (:data:`PRESENT_FONT_SIZE` in presentation mode) for the text, the ticks, the
      legend, the colour bars and the subplot titles; the title a quarter larger.
    * Every log axis gets explicit ticks (:func:`log_ticks`): labels such as ``0.1 1 10`` or ``10⁻⁶``, never the
      bare digits Plotly writes on a short log axis.

    Changes ``fig`` in place and returns it.
    """
    size = PRESENT_FONT_SIZE if presentation else FONT_SIZE
    fig.update_layout(font=dict(size=size), title_font_size=round(size * 1.25), legend_font_size=size,
                      hoverlabel_font_size=size)
    fig.update_annotations(font_size=size)
    # explicitly on every axis, legend and colour bar: Streamlit's chart theme sets them in the template (12 px),
    # which a layout-wide font does not override (tests/test_browser_projector.py measures what the browser draws)
    fig.update_xaxes(tickfont_size=size, title_font_size=size)
    fig.update_yaxes(tickfont_size=size, title_font_size=size)
    fig.update_layout(legend_title_font_size=size)
    keys = list(fig.layout.to_plotly_json())
    for name in [k for k in keys if k.startswith("coloraxis")]:
        fig.layout[name].update(colorbar_tickfont_size=size, colorbar_title_font_size=size)
    fig.update_traces(colorbar_tickfont_size=size, colorbar_title_font_size=size,
                      selector=lambda t: "colorbar" in t and t.colorbar is not None and t.colorbar.to_plotly_json())
    for name in [k for k in keys if k.startswith(("xaxis", "yaxis"))]:
        axis = fig.layout[name]
        if axis.type != "log" or axis.tickvals is not None:
            continue
        span = _log_axis_span(fig, name)
        if span is None:
            continue
        vals, text = log_ticks(*span)
        axis.update(tickmode="array", tickvals=vals, ticktext=text)
    return fig


def _thin(X: np.ndarray, k: int = MAX_PLOTTED) -> np.ndarray:
    if X.shape[0] <= k:
        return X
    idx = np.random.default_rng(0).choice(X.shape[0], k, replace=False)  # display only
    return X[np.sort(idx)]


def pca_basis(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centre, 2 x D projection) of the first two principal axes of ``P``."""
    c = P.mean(axis=0)
    _, _, vt = np.linalg.svd(P - c, full_matrices=False)
    return c, vt[:2]


def data_figure(X, public=None, *, columns, labels=None, title="", projection=None) -> go.Figure:
    """Scatter of the data: private rows faint, publishable subset highlighted.

    ``projection`` = (centre, 2 x D) maps D > 2 data to two PCA axes; otherwise
    the first two columns are drawn (one column: a histogram).
    """
    X = np.asarray(X)
    fig = go.Figure()
    if X.shape[1] == 1:
        fig.add_trace(go.Histogram(x=X[:, 0], name="private rows", marker_color="rgba(120,120,120,0.6)",
                                   nbinsx=60, histnorm="probability density"))
        if public is not None:
            fig.add_trace(go.Histogram(x=public[:, 0], name="publishable subset", marker_color=PUBLIC_COLOR,
                                       opacity=0.6, nbinsx=40, histnorm="probability density"))
        fig.update_layout(barmode="overlay", xaxis_title=columns[0], title=title, height=380, **_LAYOUT)
        return fig
    if projection is not None:
        c, V = projection
        to2 = lambda A: (np.asarray(A) - c) @ V.T  # noqa: E731
        xt, yt = "PC 1", "PC 2"
    else:
        to2 = lambda A: np.asarray(A)[:, :2]  # noqa: E731
        xt, yt = columns[0], columns[1]
    P = to2(_thin(X))
    marker = dict(size=4, color=PRIVATE_COLOR)
    if labels is not None and X.shape[0] <= MAX_PLOTTED:
        marker = dict(size=4, color=np.asarray(labels), colorscale="Turbo", opacity=0.35)
    fig.add_trace(go.Scattergl(x=P[:, 0], y=P[:, 1], mode="markers", name="private rows", marker=marker))
    if public is not None and len(public):
        Q = to2(public)
        fig.add_trace(go.Scattergl(x=Q[:, 0], y=Q[:, 1], mode="markers", name="publishable subset",
                                   marker=dict(size=6, color=PUBLIC_COLOR, line=dict(width=0.5, color="white"))))
    fig.update_layout(title=title, xaxis_title=xt, yaxis_title=yt, height=460, **_LAYOUT)
    if projection is None:
        fig.update_yaxes(scaleanchor="x", scaleratio=1)
    return fig


def weight_scale(w) -> float:
    """Colour/size scale of the weights: the 95th percentile of |w| (a few huge weights do not wash out the rest)."""
    aw = np.abs(np.asarray(w, dtype=float))
    if not aw.size or aw.max() <= 0:
        return 1.0
    q = float(np.quantile(aw, 0.95)) if aw.size >= 20 else float(aw.max())
    return q if q > 0 else float(aw.max())


def _release_traces(Z, w, *, name="synthetic points", coloraxis="coloraxis", showlegend=True, max_size=20):
    w = np.asarray(w)
    scale = weight_scale(w)
    size = 5 + (max_size - 5) * np.sqrt(np.minimum(np.abs(w) / scale, 1.0))
    traces = []
    for mask, sym, label, edge in ((w >= 0, POS_SYMBOL, "w ≥ 0", "rgba(30,30,60,0.55)"),
                                   (w < 0, NEG_SYMBOL, "w < 0 (negative)", "black")):
        if not mask.any():
            continue
        traces.append(go.Scatter(
            x=Z[mask, 0], y=Z[mask, 1], mode="markers", name=f"{name}: {label}", showlegend=showlegend,
            marker=dict(size=size[mask], color=w[mask], coloraxis=coloraxis, symbol=sym,
                        line=dict(width=1.0 if sym == NEG_SYMBOL else 0.6, color=edge)),
            customdata=w[mask], hovertemplate="w = %{customdata:.4g}<br>(%{x:.3g}, %{y:.3g})<extra></extra>",
        ))
    return traces


def release_figure(X, Z, w, *, columns, dims=(0, 1), title="", window=None) -> go.Figure:
    """Private rows faint; synthetic points sized by |w|, coloured by w, negative weights as black-edged diamonds."""
    fig = go.Figure()
    P = _thin(np.asarray(X))[:, dims]
    fig.add_trace(go.Scattergl(x=P[:, 0], y=P[:, 1], mode="markers", name="private rows (never released)",
                               marker=dict(size=3, color=PRIVATE_COLOR)))
    Zd = np.asarray(Z)[:, dims]
    for t in _release_traces(Zd, w):
        fig.add_trace(t)
    m = weight_scale(w)
    fig.update_layout(
        title=title, height=480, xaxis_title=columns[dims[0]], yaxis_title=columns[dims[1]],
        coloraxis=dict(colorscale=WEIGHT_SCALE, cmin=-m, cmax=m,
                       colorbar=dict(title="weight", tickformat=".2g")), **_LAYOUT)
    if window is None:
        # the data's own range (owner's view), not the synthetic points': a few far-away points (signed
        # weights, draws from a wide q) must not squeeze a 1-5 column into a corner of a -10..20 axis
        A = np.asarray(X)[:, dims]
        lo, hi = A.min(axis=0), A.max(axis=0)
        pad = 0.08 * np.where(hi > lo, hi - lo, np.maximum(np.abs(hi), 1.0))
        window = (lo - pad, hi + pad)
        outside = int(np.sum(np.any((Zd < window[0]) | (Zd > window[1]), axis=1)))
        if outside:
            fig.add_annotation(text=f"{outside} of {Zd.shape[0]} synthetic points lie outside this view",
                               xref="paper", yref="paper", x=0, y=1.02, showarrow=False, xanchor="left")
    fig.update_xaxes(range=[window[0][0], window[1][0]])
    fig.update_yaxes(range=[window[0][1], window[1][1]])
    if window_equal_aspect(window):
        fig.update_yaxes(scaleanchor="x", scaleratio=1)
    return fig


def window_equal_aspect(window) -> bool:
    """Equal axis scales only when the two ranges are comparable (a 1-5 column beside a 0-5000 one is not)."""
    (x0, y0), (x1, y1) = window
    wx, wy = float(x1 - x0), float(y1 - y0)
    return wx > 0 and wy > 0 and max(wx, wy) / min(wx, wy) < 10


def weight_histogram(w) -> go.Figure:
    w = np.asarray(w)
    fig = go.Figure()
    span = float(w.max() - w.min())
    width = span / 40 if span > 1e-9 * max(float(np.abs(w).max()), 1e-300) else max(float(np.abs(w).max()), 1e-12) / 20
    bins = dict(start=float(w.min()) - width / 2, end=float(w.max()) + width / 2, size=width)
    fig.add_trace(go.Histogram(x=w[w >= 0], name="w ≥ 0", marker_color="#2166ac", xbins=bins))
    if (w < 0).any():
        fig.add_trace(go.Histogram(x=w[w < 0], name="w < 0", marker_color="#b2182b", xbins=bins))
    fig.add_vline(x=0, line_dash="dot", line_color="black")
    fig.update_layout(barmode="overlay", title="Weights", xaxis_title="weight w_m", yaxis_title="count",
                      height=300, **_LAYOUT)
    return fig


def kme_heatmaps(xs, ys, private_vals, released_vals, *, columns, dims=(0, 1), Z=None, w=None,
                 diff_max: float | None = None) -> go.Figure:
    r"""Private KME, released KME and their difference (the witness function) on a grid.

    The colour scales do not follow the release shown: the two embeddings share one scale fixed to the
    *private* embedding's range on the grid (released values beyond it take the end colours), and the difference
    is drawn on ``[-diff_max, diff_max]`` (default: its own largest absolute value). Pass one ``diff_max`` for
    every release of the same data -- e.g. the largest :math:`|\tilde\mu - \hat\mu|` among them -- so that
    switching between releases at different ε does not re-scale the colours and a noisier release looks noisier.
    """
    n = len(xs)
    A = np.asarray(private_vals).reshape(n, n)
    B = np.asarray(released_vals).reshape(len(ys), n)
    D = B - A
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.08, subplot_titles=(
        "private KME  μ̂(y) = mean k(xₙ, y)", "released  Σ wₘ k(zₘ, y)", "difference (released − private)"))
    vmin, vmax = float(A.min()), float(A.max())
    if not vmax > vmin:
        vmax = vmin + 1e-12
    fig.add_trace(go.Heatmap(x=xs, y=ys, z=A, coloraxis="coloraxis", name="private"), 1, 1)
    fig.add_trace(go.Heatmap(x=xs, y=ys, z=B, coloraxis="coloraxis", name="released"), 1, 2)
    dm = float(diff_max) if diff_max is not None and diff_max > 0 else (float(np.abs(D).max()) or 1e-12)
    fig.add_trace(go.Heatmap(x=xs, y=ys, z=D, coloraxis="coloraxis2", name="difference"), 1, 3)
    if Z is not None and w is not None and len(Z) <= 400:
        Zd = np.asarray(Z)[:, dims]
        fig.add_trace(go.Scatter(x=Zd[:, 0], y=Zd[:, 1], mode="markers", showlegend=False,
                                 marker=dict(size=3, color="white", opacity=0.6), name="z_m"), 1, 2)
    bar = dict(orientation="h", y=-0.32, len=0.6, thickness=12, yanchor="top")
    fig.update_layout(
        height=470, margin=dict(l=10, r=10, t=50, b=90),
        coloraxis=dict(colorscale="Viridis", cmin=vmin, cmax=vmax,
                       colorbar=dict(title=dict(text="embedding", side="top"), x=0.31, **bar)),
        coloraxis2=dict(colorscale="RdBu", cmin=-dm, cmax=dm,
                        colorbar=dict(title=dict(text="difference", side="top"), x=0.86, len=0.3,
                                      **{k: v for k, v in bar.items() if k != "len"})),
    )
    for c in (1, 2, 3):
        fig.update_xaxes(title_text=columns[dims[0]], row=1, col=c, range=[xs[0], xs[-1]])
        fig.update_yaxes(range=[ys[0], ys[-1]], row=1, col=c)
    fig.update_yaxes(title_text=columns[dims[1]], row=1, col=1)
    return fig


def repeat_figure(xs, private_line, draws: list[np.ndarray], *, xlabel: str, distances=None) -> go.Figure:
    """Several independent releases along a line: their values (top) and their differences from the private KME."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.55, 0.45],
                        subplot_titles=("embedding along the line", "release − private (the noise made visible)"))
    priv = np.asarray(private_line)
    fig.add_trace(go.Scatter(x=xs, y=priv, mode="lines", name="private KME",
                             line=dict(color="black", width=2, dash="dot")), 1, 1)
    fig.add_trace(go.Scatter(x=xs, y=np.zeros_like(priv), mode="lines", showlegend=False,
                             line=dict(color="black", width=1, dash="dot")), 2, 1)
    for i, d in enumerate(draws):
        label = f"draw {i + 1}" + (f" (‖μ̃ − μ̂‖ = {distances[i]:.3g})" if distances is not None else "")
        color = PALETTE[i % len(PALETTE)]
        fig.add_trace(go.Scatter(x=xs, y=d, mode="lines", name=label, legendgroup=label,
                                 line=dict(width=1.5, color=color), opacity=0.85), 1, 1)
        fig.add_trace(go.Scatter(x=xs, y=np.asarray(d) - priv, mode="lines", name=label, legendgroup=label,
                                 showlegend=False, line=dict(width=1.5, color=color)), 2, 1)
    fig.update_layout(height=520, **_LAYOUT)
    fig.update_xaxes(title_text=xlabel, row=2, col=1)
    return fig


def curves_figure(x, series: list[dict], *, xlabel: str, title: str, log_x=True,
                  ylabel: str = "RKHS distance to the private KME (lower is better)", log_y=True) -> go.Figure:
    """Lines with optional error bands. ``series``: dicts with name, y, optional x, lo, hi, dash, color."""
    fig = go.Figure()
    for s in series:
        color = s.get("color")
        xs = list(s.get("x", x))
        if s.get("lo") is not None:
            fig.add_trace(go.Scatter(
                x=xs + xs[::-1], y=list(s["hi"]) + list(s["lo"])[::-1], fill="toself", mode="lines",
                fillcolor=_rgba(color, 0.18), line=dict(width=0), hoverinfo="skip", showlegend=False,
                name=s["name"] + " band"))
        fig.add_trace(go.Scatter(x=xs, y=s["y"], mode="lines+markers" if len(xs) < 30 else "lines", name=s["name"],
                                 line=dict(color=color, dash=s.get("dash", "solid"), width=2)))
    fig.update_layout(title=title, xaxis_title=xlabel, yaxis_title=ylabel,
                      height=470, **{**_LAYOUT, "margin": dict(l=10, r=10, t=40, b=10)})
    fig.update_xaxes(type="log" if log_x else "linear")
    fig.update_yaxes(type="log" if log_y else "linear")
    return fig


PALETTE = ["#d62728", "#ff7f0e", "#2ca02c", "#1f77b4", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def _rgba(color, alpha):
    if not color or not color.startswith("#"):
        return f"rgba(100,100,100,{alpha})"
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def kernel_profile(kernel, r_max: float) -> go.Figure:
    r = np.linspace(0, r_max, 200)
    fig = go.Figure(go.Scatter(x=r, y=kernel.value_at_distance(r), mode="lines", name="k(r)"))
    fig.add_vline(x=kernel.lengthscale, line_dash="dot", annotation_text="lengthscale ℓ")
    fig.update_layout(title="Kernel value against distance", xaxis_title="distance r between two rows",
                      yaxis_title="k", height=280, **_LAYOUT)
    return fig


def table_kernel_profile_figure(t, numeric: dict, categorical: dict) -> go.Figure:
    """k between two rows of a mixed table that differ in one column only (``ui.compute.table_kernel_profile``):
    one line per numeric column against the difference ``t`` (a fraction of its declared range), one dotted level
    per categorical column (another category)."""
    fig = go.Figure()
    for name, values in numeric.items():
        fig.add_trace(go.Scatter(x=t, y=values, mode="lines", name=name))
    for name, value in categorical.items():
        fig.add_trace(go.Scatter(x=[0.0, 1.0], y=[value, value], mode="lines", line=dict(dash="dot"),
                                 name=f"{name}: another category"))
    fig.update_layout(title="Kernel value when one column differs", height=300, yaxis_range=[0, 1.02],
                      xaxis_title="difference in one column (fraction of its declared range)", yaxis_title="k",
                      margin=dict(l=10, r=10, t=40, b=10))
    return fig


def sigma_figure(eps_values, analytic, classic, eps_now: float) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=eps_values, y=analytic, name="analytic Gaussian (Balle & Wang)", mode="lines"))
    fig.add_trace(go.Scatter(x=eps_values, y=classic, name="classic √(2 ln(1.25/δ))·Δ/ε", mode="lines",
                             line=dict(dash="dash")))
    fig.add_vline(x=eps_now, line_dash="dot", annotation_text=f"ε = {eps_now:g}")
    fig.update_layout(title="Noise σ per coordinate against ε", xaxis_title="ε", yaxis_title="σ", height=300,
                      **_LAYOUT)
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return fig


def template_figure(X, kme_grid, noisy_grid, xs, ys, Z, w) -> go.Figure:
    """The paper's three-step template on a small example: data → KME → privatised KME → weighted points."""
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.05, subplot_titles=(
        "① estimate the KME of the private data", "② privatise it (add calibrated noise)",
        "③ represent it by weighted synthetic points"))
    P = _thin(np.asarray(X), 1500)
    n = len(xs)
    fig.add_trace(go.Heatmap(x=xs, y=ys, z=np.asarray(kme_grid).reshape(n, n), coloraxis="coloraxis"), 1, 1)
    fig.add_trace(go.Scattergl(x=P[:, 0], y=P[:, 1], mode="markers", showlegend=False,
                               marker=dict(size=2, color="rgba(255,255,255,0.5)")), 1, 1)
    fig.add_trace(go.Heatmap(x=xs, y=ys, z=np.asarray(noisy_grid).reshape(n, n), coloraxis="coloraxis"), 1, 2)
    for t in _release_traces(np.asarray(Z)[:, :2], w, coloraxis="coloraxis2", showlegend=False, max_size=24):
        fig.add_trace(t, 1, 3)
    m = weight_scale(w)
    fig.update_layout(
        height=330, margin=dict(l=10, r=10, t=50, b=10), showlegend=False,
        coloraxis=dict(colorscale="Viridis", showscale=False),
        coloraxis2=dict(colorscale=WEIGHT_SCALE, cmin=-m, cmax=m, showscale=False),
    )
    for c in (1, 2, 3):
        fig.update_xaxes(range=[xs[0], xs[-1]], showticklabels=False, row=1, col=c)
        fig.update_yaxes(range=[ys[0], ys[-1]], showticklabels=False, row=1, col=c)
    fig.update_xaxes(showgrid=False, zeroline=False)
    fig.update_yaxes(showgrid=False, zeroline=False)
    fig.update_layout(plot_bgcolor="#f4f4f8")
    return fig


def function_figure(axes, values, truth, *, columns, title_released="released f̃ = μ̂ + s·G") -> go.Figure:
    """A function release on its grid: released, private truth and the noise (D = 1: lines; D ≥ 2: heat-maps,
    a slice through the middle of the other axes for D > 2). ``truth`` None (presentation mode: the private μ̂ is
    owner-only) draws the released function alone."""
    values = np.asarray(values)
    truth = None if truth is None else np.asarray(truth)
    if len(axes) == 1:
        fig = go.Figure()
        if truth is not None:
            fig.add_trace(go.Scatter(x=axes[0], y=truth, name="private μ̂", line=dict(color="black", width=2)))
        fig.add_trace(go.Scatter(x=axes[0], y=values, name="released", line=dict(color=PALETTE[0], width=1.5)))
        fig.update_layout(height=380, xaxis_title=columns[0], **_LAYOUT)
        return fig
    idx = tuple(slice(None) if d < 2 else len(a) // 2 for d, a in enumerate(axes))
    if truth is None:
        V = values[idx].T                       # "ij" grid -> z[y][x]
        fig = go.Figure(go.Heatmap(x=axes[0], y=axes[1], z=V, coloraxis="coloraxis"))
        fig.update_layout(height=470, margin=dict(l=10, r=10, t=50, b=10), title=title_released,
                          coloraxis=dict(colorscale="Viridis", colorbar=dict(title=dict(text="function value"))))
        fig.update_xaxes(title_text=columns[0])
        fig.update_yaxes(title_text=columns[1])
        return fig
    V, T = values[idx].T, truth[idx].T          # "ij" grid -> z[y][x]
    xs, ys = axes[0], axes[1]
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.08,
                        subplot_titles=("private μ̂ (never released)", title_released, "noise: released − private"))
    lo, hi = float(min(V.min(), T.min())), float(max(V.max(), T.max()))
    fig.add_trace(go.Heatmap(x=xs, y=ys, z=T, coloraxis="coloraxis"), 1, 1)
    fig.add_trace(go.Heatmap(x=xs, y=ys, z=V, coloraxis="coloraxis"), 1, 2)
    D = V - T
    dm = float(np.abs(D).max()) or 1e-12
    fig.add_trace(go.Heatmap(x=xs, y=ys, z=D, coloraxis="coloraxis2"), 1, 3)
    bar = dict(orientation="h", y=-0.32, thickness=12, yanchor="top")
    fig.update_layout(
        height=470, margin=dict(l=10, r=10, t=50, b=90),
        coloraxis=dict(colorscale="Viridis", cmin=lo, cmax=hi,
                       colorbar=dict(title=dict(text="function value", side="top"), x=0.31, len=0.6, **bar)),
        coloraxis2=dict(colorscale="RdBu", cmid=0, cmin=-dm, cmax=dm,
                        colorbar=dict(title=dict(text="noise", side="top"), x=0.86, len=0.3, **bar)))
    for c in (1, 2, 3):
        fig.update_xaxes(title_text=columns[0], row=1, col=c)
    fig.update_yaxes(title_text=columns[1], row=1, col=1)
    return fig


#: ``layout.meta["figure"]`` of the ε explorer's panels (so tests and readers can tell them from other figures).
EXPLORER_META = "eps-explorer"


def witness_panel(xs, ys, values, *, zmax: float, epsilon: float, columns, dims=(0, 1), title: str = "",
                  showscale: bool = True) -> go.Figure:
    r"""One small multiple of the ε explorer: a witness function :math:`\tilde\mu - \hat\mu_{\rm plan}` on a grid.

    Every panel of one explorer run gets the same ``zmax`` (colours on :math:`[-z_{\max}, z_{\max}]`) and the same
    grid ``xs``, ``ys`` (axes), so a smaller ε shows visibly more noise instead of a re-scaled colour bar. One
    column (``ys`` None): the witness along the line, on the y-range :math:`[-z_{\max}, z_{\max}]`.
    """
    zmax = float(zmax) if zmax > 0 else 1e-12
    meta = {"figure": EXPLORER_META, "epsilon": float(epsilon)}
    if ys is None:
        fig = go.Figure(go.Scatter(x=xs, y=np.asarray(values), mode="lines", name="witness",
                                   line=dict(color=PALETTE[3], width=2)))
        fig.add_hline(y=0, line_dash="dot", line_color="black")
        fig.update_layout(title=title, height=300, meta=meta, showlegend=False, xaxis_title=columns[dims[0]],
                          yaxis_title="released − planning", **{**_LAYOUT, "margin": dict(l=10, r=10, t=40, b=10)})
        fig.update_xaxes(range=[xs[0], xs[-1]])
        fig.update_yaxes(range=[-zmax, zmax])
        return fig
    n = len(xs)
    Dg = np.asarray(values).reshape(len(ys), n)
    fig = go.Figure(go.Heatmap(x=xs, y=ys, z=Dg, coloraxis="coloraxis", name="witness"))
    fig.update_layout(
        title=title, height=380, meta=meta, margin=dict(l=10, r=10, t=40, b=10),
        coloraxis=dict(colorscale="RdBu", cmin=-zmax, cmax=zmax, showscale=bool(showscale),
                       colorbar=dict(title=dict(text="released − planning", side="top"), orientation="h",
                                     y=-0.3, yanchor="top", thickness=10, len=0.9, tickformat=".2g", nticks=5)),
        xaxis_title=columns[dims[0]], yaxis_title=columns[dims[1]])
    fig.update_xaxes(range=[xs[0], xs[-1]])
    fig.update_yaxes(range=[ys[0], ys[-1]])
    return fig


# --------------------------------------------------------------------------- Clustering page
def budget_split_figure(rows: list[dict], eps: float) -> go.Figure:
    """DP k-means' budget split: the ε of each noisy Lloyd step alone (``KMeansPlan.budget_table`` rows), labelled
    with its share of (Δ/σ)², against the whole run's ε."""
    fig = go.Figure(go.Bar(x=[r["step"] for r in rows], y=[r["epsilon_alone"] for r in rows],
                           marker_color=PALETTE[3], name="ε of one step alone",
                           text=[f"{r['share']:.0%}" for r in rows], textposition="outside"))
    fig.add_hline(y=eps, line_dash="dot", line_color="red", annotation_text=f"total ε = {eps:g}")
    fig.update_layout(height=260, margin=dict(l=10, r=10, t=30, b=10), yaxis_title="ε",
                      title="Each iteration alone (label: its share of (Δ/σ)²)", showlegend=False)
    return fig


def centres_figure(X_rows, path, *, labels, dims, columns, window, n_iter: int,
                   over_private_rows: bool) -> go.Figure:
    """DP k-means' released centres in data space: their paths ``path`` (T+1, k, D) from the public start, over the
    owner's rows ``X_rows`` (empty when they are hidden), coloured by ``labels`` (the local view) when given.

    One column: histograms and a vertical line per final centre; more: the columns ``dims`` in ``window``
    (``(lo, hi)``, equal aspect), at most 4 000 rows drawn (a seeded subset: display only)."""
    k = path.shape[1]
    lab = labels
    fig = go.Figure()
    if path.shape[2] == 1:
        if lab is None and len(X_rows):
            fig.add_trace(go.Histogram(x=X_rows[:, 0], nbinsx=80, marker_color="rgba(120,120,120,0.6)",
                                       name="private rows (never released)"))
        elif lab is not None:
            for i in range(k):
                fig.add_trace(go.Histogram(x=X_rows[lab == i, 0], nbinsx=80, marker_color=PALETTE[i % 8],
                                           opacity=0.45, name=f"cluster {i + 1} (LOCAL VIEW)"))
        for i in range(k):
            fig.add_vline(x=float(path[-1, i, 0]), line_color=PALETTE[i % 8], line_width=3,
                          annotation_text=f"c{i + 1}")
        fig.update_layout(barmode="overlay", xaxis_title=columns[0])
    else:
        idx = np.arange(len(X_rows))
        if len(X_rows) > 4000:
            idx = np.sort(np.random.default_rng(0).choice(len(X_rows), 4000, replace=False))    # display only
        P = X_rows[idx][:, dims]
        if lab is None and len(X_rows):
            fig.add_trace(go.Scattergl(x=P[:, 0], y=P[:, 1], mode="markers", name="private rows (never released)",
                                       marker=dict(size=3, color=PRIVATE_COLOR)))
        elif lab is not None:
            L = lab[idx]
            for i in range(k):
                m = L == i
                fig.add_trace(go.Scattergl(x=P[m, 0], y=P[m, 1], mode="markers",
                                           name=f"cluster {i + 1} (LOCAL VIEW)",
                                           marker=dict(size=3, color=PALETTE[i % 8], opacity=0.3),
                                           legendgroup=str(i)))
        for i in range(k):
            pi = path[:, i, :][:, dims]
            fig.add_trace(go.Scatter(x=pi[:, 0], y=pi[:, 1], mode="lines+markers", legendgroup=str(i),
                                     name=f"centre {i + 1}: iterations 0–{n_iter}", showlegend=False,
                                     line=dict(color=PALETTE[i % 8], width=2),
                                     marker=dict(size=6, color=PALETTE[i % 8], line=dict(width=1, color="white")),
                                     hovertemplate="iteration %{text}<extra></extra>",
                                     text=[str(t) for t in range(len(pi))]))
        fin = path[-1][:, dims]
        fig.add_trace(go.Scatter(x=fin[:, 0], y=fin[:, 1], mode="markers+text", name="final centres (released)",
                                 text=[f"c{i + 1}" for i in range(k)], textposition="top right",
                                 marker=dict(size=18, symbol="star", color=[PALETTE[i % 8] for i in range(k)],
                                             line=dict(width=1.5, color="black"))))
        ini = path[0][:, dims]
        fig.add_trace(go.Scatter(x=ini[:, 0], y=ini[:, 1], mode="markers", name="initial centres (public)",
                                 marker=dict(size=9, symbol="x", color="black")))
        lo, hi = window
        fig.update_xaxes(range=[lo[0], hi[0]], title_text=columns[dims[0]])
        fig.update_yaxes(range=[lo[1], hi[1]], title_text=columns[dims[1]], scaleanchor="x", scaleratio=1)
    fig.update_layout(height=520, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.15),
                      title="Released centres (paths from the public start)"
                            + (" over the private rows" if over_private_rows else ""))
    return fig


def accuracy_against_epsilon_figure(summ: dict, *, metric_label: str) -> go.Figure:
    """DP k-means' accuracy curve (``AccuracyCurve.summary`` of one metric): median and quartiles over the
    repetitions against ε, with the non-private and public-start levels."""
    fig = go.Figure()
    xs = summ["epsilon"]
    fig.add_trace(go.Scatter(x=xs + xs[::-1], y=summ["q75"] + summ["q25"][::-1], fill="toself",
                             fillcolor="rgba(31,119,180,0.18)", line=dict(width=0), hoverinfo="skip",
                             name="quartiles over repetitions"))
    fig.add_trace(go.Scatter(x=xs, y=summ["median"], mode="lines+markers", name="DP k-means (median)",
                             line=dict(color=PALETTE[3], width=2)))
    for name, colr, dash in (("nonprivate", "#000000", "dash"), ("baseline", "#7f7f7f", "dot")):
        if name in summ:
            fig.add_hline(y=summ[name], line_dash=dash, line_color=colr,
                          annotation_text={"nonprivate": "non-private k-means",
                                           "baseline": "public initial centres alone"}[name])
    fig.update_xaxes(type="log", title_text="ε (log scale)")
    fig.update_layout(height=400, margin=dict(l=10, r=10, t=40, b=10), yaxis_title=metric_label,
                      title="Accuracy against ε — evaluation on the private data, not DP",
                      legend=dict(orientation="h", y=-0.2))
    return fig


# --------------------------------------------------------------------------- Generative release page
def epsilon_against_epochs_figure(cv, *, epochs: int, epsilon: float, noise_multiplier: float,
                                  delta_text: str) -> go.Figure:
    """DPGM planning: ε against the number of SGD epochs at a fixed noise (``ui.generative.planning_curve``'s
    ``cv``: epochs and the RDP, PLD and paper accountants' ε), with the chosen setting starred."""
    fig = go.Figure()
    for m, name, dash, colr in (("rdp", "Rényi DP (dp_accounting)", "solid", PALETTE[0]),
                                ("pld", "PLD (dp_accounting, tightest)", "solid", PALETTE[2]),
                                ("paper", "the paper's Theorem 4 (moments accountant)", "dash", "#000000")):
        fig.add_trace(go.Scatter(x=cv["epochs"].tolist(), y=cv[m].tolist(), mode="lines+markers", name=name,
                                 line=dict(dash=dash, color=colr)))
    fig.add_trace(go.Scatter(x=[epochs], y=[epsilon], mode="markers", name="your setting (charged)",
                             marker=dict(size=14, symbol="star", color="red", line=dict(width=1, color="black"))))
    fig.update_layout(height=330, margin=dict(l=10, r=10, t=40, b=10), xaxis_title="SGD epochs",
                      yaxis_title=f"ε at δ = {delta_text}", legend=dict(orientation="h", y=-0.25),
                      title=f"Planning: ε against epochs at this noise (σ = {noise_multiplier:.3g})")
    return fig


def paper_figure2_figure(f2c) -> go.Figure:
    """The shape of Acs et al.'s Figure 2 (``ui.generative.paper_figure2``): ε against epochs, the paper's
    Theorem 4 next to Rényi DP for the same noise."""
    fig = go.Figure()
    for m, name, dash in (("paper", "the paper's Theorem 4 (as printed)", "dash"),
                          ("rdp", "Rényi DP (dp_accounting), same noise", "solid")):
        fig.add_trace(go.Scatter(x=f2c["epochs"].tolist(), y=f2c[m].tolist(), mode="lines+markers", name=name,
                                 line=dict(dash=dash)))
    fig.update_layout(height=300, margin=dict(l=10, r=10, t=30, b=10), xaxis_title="SGD epochs (⌈1/q⌉ steps each)",
                      yaxis_title="ε at δ = 10⁻⁵", legend=dict(orientation="h", y=-0.3))
    return fig


def loss_figure(smooth) -> go.Figure:
    """DP-SGD's released noisy training loss (smoothed) against the step."""
    fig = go.Figure(go.Scatter(y=np.asarray(smooth).tolist(), mode="lines", line=dict(color=PALETTE[3])))
    fig.update_layout(height=220, margin=dict(l=10, r=10, t=30, b=10), xaxis_title="SGD step",
                      yaxis_title="noisy loss", title="Training loss (the noisy loss released by DP-SGD)")
    return fig


def generated_rows_figure(rows, group, held, *, groups, dims, columns) -> go.Figure:
    """Generated ``rows`` coloured by ``group`` (an index into ``groups``: classes or clusters) over the owner's
    held-out rows ``held`` (grey; empty when hidden), in the columns ``dims``."""
    fig = go.Figure()
    if len(held):
        fig.add_trace(go.Scattergl(x=held[:, dims[0]], y=held[:, dims[1]], mode="markers",
                                   name="real held-out rows", marker=dict(size=5, color=PRIVATE_COLOR)))
    for g in range(len(groups)):
        m = group == g
        if m.any():
            fig.add_trace(go.Scattergl(x=rows[m, dims[0]], y=rows[m, dims[1]], mode="markers",
                                       name=f"generated: {groups[g]}",
                                       marker=dict(size=4, color=PALETTE[g % len(PALETTE)], opacity=0.6)))
    fig.update_layout(height=480, margin=dict(l=10, r=10, t=40, b=10), xaxis_title=columns[dims[0]],
                      yaxis_title=columns[dims[1]], legend=dict(orientation="h", y=-0.15),
                      title="Generated rows (coloured) over the real held-out rows (grey)")
    return fig


# --------------------------------------------------------------------------- Private two-sample test page
def null_distribution_figure(res, ref: dict) -> go.Figure:
    """A private two-sample test's simulated null (``res.null.samples``, noise-aware) against the textbook χ²_J
    null ``ref`` (``dpkme.two_sample.curves.chi2_reference``), with the statistic and the critical value."""
    samples = np.asarray(res.null.samples)
    fig = go.Figure(go.Histogram(x=samples, nbinsx=60, name=f"null used ({res.null.kind}, noise-aware)",
                                 marker_color="rgba(31,119,180,0.55)", histnorm="probability density"))
    J, hi = ref["dof"], ref["hi"]
    fig.add_trace(go.Scatter(x=ref["x"], y=ref["pdf"], mode="lines", name=f"textbook χ²_{J} null (ignores the noise)",
                             line=dict(color="black", dash="dot")))
    fig.add_vline(x=res.statistic, line_color="red", annotation_text="statistic")
    fig.add_vline(x=res.critical_value(), line_dash="dash", line_color="#1f77b4",
                  annotation_text=f"critical value (α = {res.alpha:g})", annotation_position="bottom right")
    fig.update_layout(title="Null distribution of the private statistic (simulated from released quantities only)",
                      xaxis_title="statistic", yaxis_title="density", height=380, xaxis_range=[0, hi],
                      margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def rejection_curves_figure(series: dict, *, methods, alpha: float, title: str, xlabel: str) -> go.Figure:
    """Rejection rates of the two-sample tests along ε or n (``dpkme.two_sample.curves.curve_series``), with their
    Clopper–Pearson error bars, the level α and, under H₀, the band of an exact level-α test."""
    xs = series["x"]
    fig = go.Figure()
    if series["band"] is not None:
        lo, hi = series["band"]
        fig.add_trace(go.Scatter(x=xs + xs[::-1], y=hi + lo[::-1], fill="toself", fillcolor="rgba(0,0,0,0.08)",
                                 line=dict(width=0), name="95 % range of an exact level-α test", hoverinfo="skip"))
    fig.add_hline(y=alpha, line_dash="dot", annotation_text=f"α = {alpha:g}")
    for j, m in enumerate(methods):
        sm = series["methods"][m]
        y, err_hi, err_lo = sm["rate"], sm["err_high"], sm["err_low"]
        dash = "dot" if "naive" in m else ("dash" if m == "nonprivate" else "solid")
        fig.add_trace(go.Scatter(x=xs, y=y, mode="lines+markers", name=f"{m}", line=dict(color=PALETTE[j % 8],
                                 dash=dash), error_y=dict(type="data", array=err_hi, arrayminus=err_lo, width=3)))
    fig.update_layout(title=title, xaxis_title=xlabel, yaxis_title="rejection rate", yaxis_range=[0, 1.02],
                      height=460, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.22))
    fig.update_xaxes(type="log")
    return fig


# --------------------------------------------------------------------------- Privacy audit page
def privacy_loss_figure(d: dict, *, claimed_epsilon: float) -> go.Figure:
    """Histograms of an audit's privacy loss on D and on D′ and the analytic Gaussian densities
    (``dpkme.audit.exhibits.privacy_loss_densities``), with the claimed ε."""
    edges = d["edges"]
    fig = go.Figure()
    for dens, name, colour in ((d["density_d"], "runs on D", PALETTE[3]),
                               (d["density_neighbour"], "runs on D′", PALETTE[1])):
        fig.add_trace(go.Bar(x=d["centres"], y=dens, width=d["widths"], name=name, marker_color=colour,
                             opacity=0.55))
    a = d["analytic"]
    if a is not None:
        for pdf, name, colour in ((a["pdf_d"], "analytic N(½(Δ/σ)², (Δ/σ)²) on D", PALETTE[3]),
                                  (a["pdf_neighbour"], "analytic N(−½(Δ/σ)², (Δ/σ)²) on D′", PALETTE[1])):
            fig.add_trace(go.Scatter(x=a["x"], y=pdf, mode="lines", name=name, line=dict(color=colour, dash="dash")))
    span = max(edges[-1] - edges[0], 1e-9)
    eps = claimed_epsilon
    if edges[0] - 0.25 * span <= eps <= edges[-1] + 0.25 * span:
        fig.add_vline(x=eps, line_dash="dot", line_color="black", annotation_text=f"claimed ε = {eps:g}")
    fig.update_layout(barmode="overlay", height=340, margin=dict(l=10, r=10, t=40, b=10),
                      title="Privacy-loss distribution", xaxis_title="privacy loss L = log p_D(s) / p_D′(s)",
                      yaxis_title="density", legend=dict(orientation="h", yanchor="top", y=-0.25, x=0))
    return fig


def epsilon_delta_figure(c: dict, *, alpha: float, claimed_epsilon: float, claimed_delta: float, lower_bound: float,
                         lower_bound_text: str, delta_text: str) -> go.Figure:
    """An audit's ε(δ) on a log-δ axis (``dpkme.audit.exhibits.epsilon_delta_curves``): the claimed curve, the exact
    curve of the pair, the audited lower bounds, the plug-in estimate and the claim (pure DP: the bound at δ = 0 as
    a level)."""
    fig = go.Figure()
    x, y = c["claimed"]
    if x.size:
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name="claimed ε(δ) (the calibration's worst case)",
                                 line=dict(color="black", width=2)))
    x, y = c["pair"]
    if x.size:
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name="exact ε(δ) of the audited pair",
                                 line=dict(color=PALETTE[0], dash="dash")))
    x, y = c["plug_in"]
    if x.size:
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines",
                                 name="plug-in estimate from the runs' privacy loss (estimate, not a bound)",
                                 line=dict(color=PALETTE[2], dash="dot")))
    x, y = c["lower_bounds"]
    if x.size:
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name=f"audited lower bound ({1 - alpha:.3g} each)",
                                 marker=dict(color=PALETTE[3], size=7)))
    if claimed_delta <= 0:   # pure DP: δ = 0 is not on a log axis; draw the bound at δ = 0 as a level
        fig.add_hline(y=lower_bound, line_dash="dot", line_color=PALETTE[3],
                      annotation_text=f"audited lower bound at δ = 0: {lower_bound_text}")
    else:
        fig.add_trace(go.Scatter(x=[claimed_delta], y=[claimed_epsilon], mode="markers",
                                 name=f"claim (ε = {claimed_epsilon:g}, δ = {delta_text})",
                                 marker=dict(symbol="star", size=14, color="black")))
    fig.update_xaxes(type="log", title="δ (log scale)")
    fig.update_yaxes(title="ε", range=[0, 1.15 * c["top"]])
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=40, b=10), title="Privacy curves ε(δ)",
                      legend=dict(orientation="h", yanchor="top", y=-0.25, x=0))
    return fig


def membership_figure(res, grid, bound, theory) -> go.Figure:
    """A membership-inference attack's balanced accuracy against ε (log axis; ``dpkme.audit.membership``): the runs
    with their intervals, the exact Gaussian curve ``theory``, the DP ``bound`` (e^ε + δ)/(1 + e^ε) on ``grid`` and
    the 50 % chance line."""
    fig = go.Figure()
    fig.add_hline(y=0.5, line_dash="dot", line_color="grey", annotation_text="chance: 50 %",
                  annotation_position="bottom right")
    fig.add_trace(go.Scatter(x=grid, y=bound, mode="lines",
                             name="bound for any attacker: (e^ε + δ)/(1 + e^ε)", line=dict(color="black", width=2)))
    fig.add_trace(go.Scatter(x=grid, y=theory, mode="lines", name="theory for this Gaussian noise: Φ(d/(2σ))",
                             line=dict(color=PALETTE[3], dash="dash")))
    fig.add_trace(go.Scatter(
        x=res.epsilons, y=res.accuracy, mode="markers", name=f"attack on {res.runs:,} + {res.runs:,} releases",
        marker=dict(color=PALETTE[0], size=9),
        error_y=dict(type="data", symmetric=False, array=res.accuracy_high - res.accuracy,
                     arrayminus=res.accuracy - res.accuracy_low, thickness=1.5)))
    fig.update_xaxes(type="log", title="ε (log scale)")
    fig.update_yaxes(title="attacker's balanced accuracy", range=[0.45, 1.02], tickformat=".0%")
    fig.update_layout(height=400, margin=dict(l=10, r=10, t=40, b=10), title="Membership inference against ε",
                      legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))
    return fig


def feature_norms_figure(squared_norms) -> go.Figure:
    """Squared norms of unpaired cos(ωᵀx + b) random features over public probe points, against the 1 a privacy
    proof assumes."""
    fig = go.Figure()
    fig.add_trace(go.Histogram(x=squared_norms, name="cos(ωᵀx + b) features", nbinsx=80, opacity=0.7))
    fig.add_vline(x=1.0, line_dash="dot", annotation_text="‖φ‖² = 1 (assumed)")
    fig.update_layout(barmode="overlay", height=320, xaxis_title="‖φ(x)‖² over 20 000 points of a public box",
                      margin=dict(l=10, r=10, t=30, b=10))
    return fig


# --------------------------------------------------------------------------- Budget ledger page
def cumulative_epsilon_figure(xs, series: dict, *, budget: float, delta_text: str) -> go.Figure:
    """The ledger's total ε after each charge, one line per accountant (``series``: name -> ε values; an infinite
    value, e.g. basic composition past the δ budget, is left out), against the ε budget."""
    fig = go.Figure()
    for (name, ys), dash in zip(series.items(), ("dash", "dot", "solid")):
        fig.add_trace(go.Scatter(x=xs, y=[y if math.isfinite(y) else None for y in ys], name=name,
                                 mode="lines+markers", line=dict(dash=dash)))
    fig.add_hline(y=budget, line_color="red", annotation_text="budget")
    fig.update_xaxes(dtick=1)
    fig.update_layout(title=f"Total ε after each charge (at δ = {delta_text})", xaxis_title="charges so far",
                      yaxis_title="ε", height=340, margin=dict(l=10, r=10, t=40, b=10))
    return fig

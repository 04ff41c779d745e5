r"""One glossary of the symbols the app shows: each symbol once, with its name and plain words.

Pages take their help texts and captions from here (:func:`plain`, :func:`help_text`), and the sidebar shows the
whole list (:func:`glossary_expander`), so a symbol means the same thing on every page. Two rules keep symbols from
clashing:

* :math:`\Delta` is only the **sensitivity**; the distance between the released and the private embedding is
  written :math:`\|\tilde\mu - \hat\mu\|` (or called "RKHS distance"), never :math:`\Delta`.
* :math:`\mu` is only an **embedding** (:math:`\hat\mu`, :math:`\tilde\mu`, :math:`\mu_P`). The Gaussian-DP
  parameter that papers call :math:`\mu` is written :math:`\Delta/\sigma` (the inverse of the noise multiplier).

The library's own names (``dpkme``) may differ; this is the vocabulary of the app's text.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class Term:
    """One entry of the glossary.

    Parameters
    ----------
    symbol : str
        The symbol as the pages print it (e.g. ``"δ"``).
    name : str
        Its short name (e.g. ``"failure probability"``).
    plain : str
        What it means, in words a newcomer understands (no other symbol left unexplained).
    """

    symbol: str
    name: str
    plain: str


#: The glossary, in reading order: privacy first, then the data, the summary and the noise.
TERMS: tuple[Term, ...] = (
    Term("ε", "privacy loss (epsilon)",
         "How much one person's row can change the chance of any result: by at most a factor e^ε (about 2.7 for "
         "ε = 1). Smaller ε means stronger privacy and more noise."),
    Term("δ", "failure probability (delta)",
         "The small chance that the ε promise does not hold, for example δ = 10⁻⁶: a one-in-a-million chance. "
         "Keep it far below 1/N (one over the number of rows): publishing one random row in full already has "
         "δ = 1/N."),
    Term("N", "private rows", "The number of rows (people) that the guarantee protects."),
    Term("D", "columns", "The number of numeric columns used (the dimension of the data)."),
    Term("k", "kernel",
         "A similarity between two rows, between 0 and 1 (1 = the same row). It decides which features of the data "
         "the summary keeps."),
    Term("ℓ", "lengthscale",
         "How far apart two rows may be, in the data's units, and still look similar to the kernel."),
    Term("μ̂", "kernel mean embedding of the private rows",
         "The private summary: the average of one kernel bump per private row, a smoothed density of the data. "
         "Never released."),
    Term("μ̃", "released embedding",
         "The noisy summary that is published, written as a weighted sum of kernel bumps at the synthetic points."),
    Term("‖μ̃ − μ̂‖", "RKHS distance",
         "How far the released summary is from the private one (0 = identical, smaller is better). It reads the "
         "private rows: shown to the data owner only, never released."),
    Term("M", "synthetic points",
         "How many weighted synthetic points (zₘ with weight wₘ) represent the release."),
    Term("F", "noise coordinates",
         "How many numbers the noise is added to (at most M for Algorithm 1): more coordinates, more noise in "
         "total."),
    Term("Δ", "sensitivity",
         "The most that replacing one row can move the private summary μ̂ (√2/N for these kernels). The noise is "
         "scaled to it."),
    Term("σ", "noise scale", "The standard deviation of the Gaussian noise added to each coordinate."),
    Term("σ/Δ", "noise multiplier",
         "The noise relative to the sensitivity: the larger, the more private. Accountants add releases up through "
         "it; its inverse Δ/σ is the Gaussian-DP parameter (papers call it μ; here μ is always an embedding)."),
)

_BY_SYMBOL = {t.symbol: t for t in TERMS}


def term(symbol: str) -> Term:
    """The glossary entry of ``symbol``.

    Parameters
    ----------
    symbol : str
        A symbol of :data:`TERMS`, e.g. ``"δ"``.

    Returns
    -------
    Term
        Its entry.

    Raises
    ------
    ValueError
        If ``symbol`` is not in the glossary (add it to :data:`TERMS` first).
    """
    try:
        return _BY_SYMBOL[symbol]
    except KeyError:
        raise ValueError(f"{symbol!r} is not in the glossary; add it to ui.glossary.TERMS "
                         f"(known: {', '.join(_BY_SYMBOL)}).") from None


def plain(symbol: str) -> str:
    """The plain words for ``symbol`` (see :func:`term`)."""
    return term(symbol).plain


def help_text(symbol: str) -> str:
    """``"symbol — name: plain words"``, for a widget's or metric's ``help=``."""
    t = term(symbol)
    return f"{t.symbol} — {t.name}: {t.plain}"


def glossary_markdown() -> str:
    """The whole glossary as a Markdown list (one line per symbol)."""
    return "\n".join(f"* **{t.symbol}** — {t.name}: {t.plain}" for t in TERMS)


#: Both privacy sliders (ε and δ) run this way: small values (more privacy) on the left.
SLIDER_DIRECTION = "Both sliders run the same way: ← more privacy (more noise) · less privacy (less noise) →."


def glossary_expander() -> None:
    """The glossary in a collapsed expander (the sidebar shows it on every page)."""
    with st.expander("Symbols and words (glossary)", icon=":material/menu_book:"):
        st.markdown(glossary_markdown())

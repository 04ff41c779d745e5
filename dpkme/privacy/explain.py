r"""The guarantee of a release in plain words, for people who do not read :math:`(\varepsilon, \delta)`.

A release is :math:`(\varepsilon, \delta)`-differentially private when, for any two *neighbouring* tables
:math:`D, D'` and any set :math:`S` of results,

.. math::
    P[\mathcal M(D) \in S] \le e^{\varepsilon}\, P[\mathcal M(D') \in S] + \delta .

:func:`guarantee_in_words` says the same to a stakeholder in a few sentences: the unit of privacy (one
row of the private table), the neighbouring relation (one row *replaced* by another, or one row *added or
removed*), what :math:`e^\varepsilon` bounds (the factor by which one person's row can change the
probability of any result), what :math:`\delta` is (the small probability with which that bound may fail),
and what that means for an attacker: telling two neighbouring tables apart from the release succeeds at
most :math:`(e^\varepsilon + \delta)/(1 + e^\varepsilon)` of the time, where a coin flip succeeds half of the
time (the bound of :mod:`dpkme.audit.membership`). A release that is not differentially private (seeded
noise, an input read off the private rows) is described as such, with its reasons, and nothing else.

:func:`release_guarantee_in_words` reads those quantities from a release object and its privacy claim
(:func:`dpkme.privacy.leaks.privacy_claim`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

from .._validation import check_delta, check_in, check_positive_int

__all__ = ["guarantee_in_words", "release_guarantee_in_words", "attack_accuracy_bound", "MECHANISM_WORDS", "power_of_ten"]

#: How each mechanism is named in the sentences (other names are used as given).
MECHANISM_WORDS = {
    "algorithm1": "Algorithm 1 of Balog et al. 2018",
    "algorithm2": "Algorithm 2 of Balog et al. 2018",
    "exponential": "the exponential mechanism",
    "gp-release": "the Gaussian-process release",
    "clusterwise-algorithm2": "the cluster-wise release (Algorithm 2 per cluster)",
    "uniform-baseline": "the uniform baseline",
}


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(v: float) -> str:
    """A small or large number written as a power of ten, the one way δ is written: ``10⁻⁶``, ``2.5·10⁻⁷``,
    ``10¹²`` (never ``1e-06`` or ``0.000001``); exactly 0 as ``0``.

    Parameters
    ----------
    v : float
        The number.

    Returns
    -------
    str
        Its text.

    Examples
    --------
    >>> power_of_ten(1e-6), power_of_ten(2.5e-7), power_of_ten(0.0)
    ('10⁻⁶', '2.5·10⁻⁷', '0')
    """
    v = float(v)
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    mant, _, exp = f"{v:.2e}".partition("e")
    mant = mant.rstrip("0").rstrip(".")
    power = "10" + str(int(exp)).translate(_SUPERSCRIPT)
    if mant in ("1", "-1"):
        return power if mant == "1" else "−" + power
    return f"{mant}·{power}"


def attack_accuracy_bound(epsilon: float, delta: float = 0.0) -> float:
    r"""The best accuracy of telling two neighbouring tables apart from one :math:`(\varepsilon,\delta)`-DP result.

    Any test that guesses from the release which of two neighbouring tables was used (each a priori equally
    likely) is right with probability at most :math:`(e^\varepsilon + \delta)/(1 + e^\varepsilon)`, capped at 1.

    Parameters
    ----------
    epsilon : float
        :math:`\varepsilon \ge 0`.
    delta : float, default=0.0
        :math:`\delta \in [0, 1)`.

    Returns
    -------
    float
        The bound, in :math:`[1/2, 1]`.

    Examples
    --------
    >>> round(attack_accuracy_bound(1.0), 4)
    0.7311
    >>> attack_accuracy_bound(0.0)
    0.5
    """
    eps = _check_epsilon_or_zero(epsilon)
    d = check_delta(delta, allow_zero=True)
    if math.isinf(eps):
        return 1.0
    # (e^ε + δ)/(1 + e^ε) = (1 + δ e^{-ε})/(1 + e^{-ε}): no overflow for large ε
    t = math.exp(-eps)
    return min(1.0, (1.0 + d * t) / (1.0 + t))


def guarantee_in_words(*, epsilon: float, delta: float, neighbouring: str = "replace-one",
                       n_private: int | None = None, mechanism: str | None = None, private: bool = True,
                       reasons: Sequence[object] = (), n_public: int = 0, n_heldout: int = 0) -> str:
    r"""What an :math:`(\varepsilon, \delta)` guarantee means for one person, in two to five plain sentences.

    Private: who is protected (the unit of privacy is one row of the ``n_private`` private rows; a person
    with :math:`k` rows is protected :math:`k` times more weakly), the neighbouring relation in words, the
    factor :math:`e^\varepsilon` and the failure probability :math:`\delta`, and the best accuracy of an
    attacker who tries to tell the two neighbouring tables apart, :func:`attack_accuracy_bound`. Rows
    published in the clear (``n_public``) are said to be unprotected. Not private: that, its reasons and
    nothing more.

    Parameters
    ----------
    epsilon : float
        :math:`\varepsilon \ge 0` of the release (0: it reads no private row).
    delta : float
        :math:`\delta \in [0, 1)`.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        The neighbouring relation of the guarantee.
    n_private : int, optional
        The public number :math:`N` of protected rows.
    mechanism : str, optional
        The release's mechanism (a key of :data:`MECHANISM_WORDS` or any name).
    private : bool, default=True
        Whether the release is differentially private (:func:`dpkme.privacy.leaks.privacy_claim`).
    reasons : sequence of str, default=()
        Why it is not (used when ``private`` is False).
    n_public : int, default=0
        Rows published in the clear (a declared-public subset): not protected.
    n_heldout : int, default=0
        Rows held out of the release (never read by it).

    Returns
    -------
    str
        The sentences, separated by single spaces.

    Raises
    ------
    ValueError
        For an :math:`\varepsilon` or :math:`\delta` out of range, an unknown ``neighbouring`` or a negative count.

    Examples
    --------
    >>> text = guarantee_in_words(epsilon=1.0, delta=1e-6, n_private=1000, mechanism="algorithm2")
    >>> "e^ε = 2.72" in text and "73 %" in text and "1,000 private rows" in text
    True
    >>> guarantee_in_words(epsilon=1.0, delta=1e-6, private=False, reasons=["the noise is seeded"])[:44]
    'This release is NOT differentially private: '
    """
    eps = _check_epsilon_or_zero(epsilon)
    d = check_delta(delta, allow_zero=True)
    check_in(neighbouring, ("replace-one", "add-remove"), name="neighbouring")
    n = None if n_private is None else check_positive_int(n_private, name="n_private", minimum=0)
    n_pub = check_positive_int(n_public, name="n_public", minimum=0)
    n_held = check_positive_int(n_heldout, name="n_heldout", minimum=0)
    what = "This release" + (f" ({MECHANISM_WORDS.get(str(mechanism), str(mechanism))})" if mechanism else "")
    if not private:
        why = [str(r).strip().rstrip(".") for r in (reasons or ()) if str(r).strip()]
        why = list(dict.fromkeys(why))
        return (f"This release is NOT differentially private: {'; '.join(why) or 'see its warnings'}. "
                "It gives the people in the data no formal privacy guarantee: do not publish it as a private release.")
    rows = f"the {n:,} private rows" if n is not None else "the private rows"
    parts = []
    if n_pub:
        parts.append(f"the {n_pub:,} rows declared public are published as they are and are not protected")
    if n_held:
        parts.append(f"the {n_held:,} held-out rows are not used by this release")
    joined = "; ".join(parts)
    tail = [joined[:1].upper() + joined[1:] + "."] if parts else []
    if eps == 0:
        return " ".join([f"{what} reads none of {rows} (ε = 0): it reveals nothing about them.", *tail])
    factor = math.exp(eps) if eps < 700 else math.inf
    factor_text = f"{factor:.3g}" if math.isfinite(factor) else "∞"
    if neighbouring == "replace-one":
        change = (f"Replacing any one person's row by any other possible row (the table keeps its "
                  f"{n:,} rows)" if n is not None else "Replacing any one person's row by any other possible row")
        attack = "whether a given row is one person's or another's"
    else:
        change = "Adding or removing any one person's row"
        attack = "whether a given person's row is in the table"
    delta_text = "0 (pure ε-differential privacy)" if d == 0 else power_of_ten(d)
    acc = attack_accuracy_bound(eps, d)
    acc_text = f"{100 * acc:.1f} %" if acc < 0.6 else f"{100 * acc:.0f} %"
    sentences = [
        f"{what} protects each of {rows}: the unit of privacy is one row, so one person if each person has one row "
        f"(someone with k rows is protected k times more weakly).",
        f"{change} changes the probability of any result of this release by at most a factor e^ε = {factor_text} "
        f"(ε = {eps:g})" + ("." if d == 0 else f", except with a small probability δ = {delta_text} that this bound fails."),
        f"So an attacker who knows everyone else's rows and tries to tell from the release {attack} is right at most "
        f"{acc_text} of the time, where a coin flip is right 50 % of the time; anything computed from the release "
        "afterwards (synthetic rows, estimates) keeps this guarantee.",
    ]
    if n is not None and d > 0 and d >= 1.0 / max(n, 1):
        sentences.append(f"Warning: δ = {delta_text} is not small next to 1/N = 1/{n:,}; a δ that large would allow "
                         "publishing some rows outright, so choose δ well below 1/N.")
    return " ".join(sentences + tail)


def release_guarantee_in_words(release: object, *, private: bool | None = None, reasons: Sequence[object] = (),
                               n_private: int | None = None, n_public: int = 0, n_heldout: int = 0) -> str:
    r"""The guarantee of ``release`` in plain words (:func:`guarantee_in_words` with its own ε, δ, N, relation).

    Parameters
    ----------
    release : release object
        A :class:`~dpkme.release.Release`, :class:`~dpkme.release.tabular.TableRelease` or any object with
        ``epsilon``, ``delta`` and (optionally) ``neighbouring``, ``n_private``, ``mechanism``, ``noise_source``
        and ``params``.
    private : bool, optional
        Override: False when the caller knows of further reasons (they are combined with the release's own
        claim, :func:`dpkme.privacy.leaks.privacy_claim`, which always wins when it says not private).
    reasons : sequence of str, default=()
        The caller's reasons why the release is not private.
    n_private : int, optional
        The number of protected rows, for a result that does not record it (default: ``release.n_private``).
    n_public : int, default=0
        Rows published in the clear.
    n_heldout : int, default=0
        Rows held out of the release.

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np, dpkme
    >>> X = np.random.default_rng(0).normal(size=(200, 1))
    >>> rel = dpkme.algorithm2(X, kernel=dpkme.GaussianKernel(lengthscale=1.0), epsilon=0.5, delta=1e-6,
    ...                        n_points=5, n_features=100)
    >>> "factor e^ε = 1.65" in release_guarantee_in_words(rel)
    True
    >>> release_guarantee_in_words(dpkme.algorithm2(X, kernel=dpkme.GaussianKernel(lengthscale=1.0), epsilon=0.5,
    ...     delta=1e-6, n_points=5, n_features=100, random_state=3)).startswith("This release is NOT")
    True
    """
    from .leaks import is_private, leak_reasons, privacy_claim

    rel = getattr(release, "release", release)          # a TableRelease wraps its Release
    raw = getattr(rel, "epsilon", None)
    eps = math.inf if raw is None else float(raw)       # no ε recorded: the claim below says why it is not private
    # ε = 0 (the uniform baseline): no private row is read, so no noise is needed; only a stamp can void it
    claim: dict[str, Any] = privacy_claim(rel) if eps > 0 else {"differentially_private": is_private(rel),
                                                "not_private_because": list(leak_reasons(rel))}
    ok = bool(claim["differentially_private"]) and private is not False
    why = [*claim.get("not_private_because", []), *[str(r) for r in reasons]]
    n_priv = getattr(rel, "n_private", None) if n_private is None else n_private
    return guarantee_in_words(
        epsilon=eps, delta=float(getattr(rel, "delta", None) or 0.0),
        neighbouring=str(getattr(rel, "neighbouring", "replace-one")),
        n_private=None if n_priv is None else int(n_priv), mechanism=getattr(rel, "mechanism", None),
        private=ok, reasons=why, n_public=n_public, n_heldout=n_heldout)


def _check_epsilon_or_zero(epsilon: object) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):   # numpy floats and ints are Real
        raise ValueError(f"epsilon must be a number >= 0, got {epsilon!r:.60}.")
    eps = float(epsilon)
    if math.isnan(eps) or eps < 0:
        raise ValueError(f"epsilon must be a number >= 0 (0: no private row is read), got {epsilon!r}.")
    return eps

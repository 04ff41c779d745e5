r"""Leak guards: data-dependent choices on a private path are refused, charged, or flagged.

A release is :math:`(\varepsilon,\delta)`-DP only if everything its noise is
calibrated around is **fixed independently of the private data**: the kernel
and its length scale, a declared box and the standardisation constants, the
synthetic/initial points and the candidate grids, the number of points
:math:`M`, and any stopping rule. If one of them is read off the data (a
median heuristic, the data's min/max or mean/std, k-means++ on the private
rows, choosing :math:`M` or stopping a solver by the error to the private
embedding), the guarantee is void: the choice itself is a statistic of the
data released without noise, and it can move the calibrated output by far more
than the sensitivity.

In dpkme each such input is

* **declared** by the user or taken from **public** data (``public_*``
  functions and parameters, e.g. :func:`dpkme.privacy.bandwidth.public_lengthscale`,
  :meth:`dpkme.preprocessing.DeclaredScaling.from_public_data`, ``init="public"``);
* or chosen **privately** with its budget charged to the ledger
  (:func:`dpkme.privacy.bandwidth.private_lengthscale`; Algorithm 3's private norm bound
  in :mod:`dpkme.clustering.norm`);
* or, when the user insists on a data-dependent value, **flagged**:
  :func:`warn_data_dependent` emits a :class:`PrivacyLeakWarning` and
  :func:`mark_not_private` stamps the release (``params["private"] = False``
  and the reasons), so that exports and the app show it as *not private*.

:func:`find_data_dependent_inputs` is a heuristic check for the common
accidents (a length scale equal to the data's median heuristic, a box equal to
the data's min/max, standardisation constants equal to the data's mean/std).
It can only find coincidences with these statistics; declaring inputs honestly
is the user's responsibility.

Floating-point caveats (idealised numerics)
-------------------------------------------
The guarantees of dpkme are proved for **exact real arithmetic**. The
implementation uses IEEE double precision and numpy's PCG64 generator, and
this is an honest list of where that differs:

* *Noise sampling.* Gaussian and Laplace noise are drawn with numpy's
  floating-point samplers. Their outputs lie on a discrete, non-uniform set of
  doubles, and the set of reachable values depends on the true value. Mironov
  (CCS 2012) showed that for a textbook Laplace implementation an observer can
  sometimes tell neighbouring inputs apart from the low-order bits of a single
  output; snapping or discrete samplers (Canonne, Kamath & Steinke 2020) fix
  this. dpkme does not implement them: its releases are **not hardened against
  floating-point attacks**. The same holds for the Gumbel-max sampling of the
  exponential mechanism (Ilvento, CCS 2020).
* *Randomness.* PCG64 is a statistical, not a cryptographic, generator. An
  int ``random_state`` makes the noise reproducible (``noise_source="seeded"``):
  teaching only -- whoever knows the seed can subtract the noise, and every
  release records its seed and a warning. ``random_state=None`` draws OS
  entropy and records no seed (``noise_source="os-entropy"``): use it for real
  releases. (Its generator is still PCG64, seeded from the OS.)
* *Sensitivities of computed statistics.* Sensitivities are proved for exact
  kernel means; the computed ones carry rounding errors of about
  :math:`10^{-13}` relative (blocked sums, GEMM-based distances,
  :mod:`dpkme.kernels`). Where a sum's rounding depends on other rows or on a
  data-derived numerical centre (e.g. the median used to centre blocks in
  :meth:`dpkme.kernels.Kernel.mean_gram`), the computed statistic can move by
  slightly more than its exact sensitivity. This is orders of magnitude below
  the noise, but it is not covered by the proofs; the calibrations add small
  margins only where stated (the :math:`10^{-12}` on random-feature norms).
* *Calibration.* Noise scales are found by bisection and always rounded toward
  more noise, then re-verified in floating point (:mod:`dpkme.privacy.calibration`).

Empirical audits (:mod:`dpkme.audit`) test the mechanisms as implemented,
floating point included, but only at the resolution a few thousand runs allow
(probabilities of about :math:`10^{-3}`); they cannot detect low-order-bit
leaks.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from .._validation import check_array, check_positive_float

__all__ = [
    "PrivacyLeakWarning",
    "LeakRecord",
    "REMEDIES",
    "warn_data_dependent",
    "mark_not_private",
    "is_private",
    "leak_reasons",
    "privacy_claim",
    "PRIVATE_NOISE_SOURCES",
    "find_data_dependent_inputs",
]


class PrivacyLeakWarning(UserWarning):
    """A private path used an input that depends on the private data (like diffprivlib's warning).

    The release is then **not** differentially private as claimed; it is
    marked with :func:`mark_not_private`.
    """


@dataclass(frozen=True)
class LeakRecord:
    """One data-dependent input: which parameter, how it was obtained, and the private alternative.

    Made by :func:`warn_data_dependent` and :func:`find_data_dependent_inputs`;
    :func:`mark_not_private` accepts it as a reason.

    Parameters
    ----------
    parameter : str
        Name of the input, e.g. ``"lengthscale"``, ``"domain"``, ``"points"``
        (the keys of :data:`REMEDIES`).
    source : str
        How it was derived from the private data, e.g. ``"median heuristic of
        the private rows"``.
    remedy : str, default ""
        The private alternative to suggest (empty: none).

    Examples
    --------
    >>> from dpkme.privacy.leaks import LeakRecord
    >>> LeakRecord("lengthscale", "median heuristic of the private rows").message()
    'lengthscale was derived from the private data (median heuristic of the private rows); the release is not private.'
    """

    parameter: str
    source: str
    remedy: str = ""

    def message(self) -> str:
        text = f"{self.parameter} was derived from the private data ({self.source}); the release is not private"
        return text + (f". Instead: {self.remedy}" if self.remedy else ".")

    def to_dict(self) -> dict[str, str]:
        return {"parameter": self.parameter, "source": self.source, "remedy": self.remedy}


#: Default remedies per parameter (shown by :func:`warn_data_dependent`).
REMEDIES = {
    "lengthscale": "declare it, use public_lengthscale(public rows), or private_lengthscale(X, grid=..., epsilon=...) "
                   "with its charge",
    "domain": "declare the box from public knowledge (physical/legal ranges, a data dictionary)",
    "bounds": "declare the box from public knowledge (physical/legal ranges, a data dictionary)",
    "center": "use DeclaredScaling with declared constants or DeclaredScaling.from_public_data(public rows)",
    "scale": "use DeclaredScaling with declared constants or DeclaredScaling.from_public_data(public rows)",
    "points": "use public points (a publishable subset, a grid over a declared box, draws from a public q)",
    "init": "initialise from a declared box, public q draws or public rows (init='public')",
    "n_points": "fix M before looking at the data (or compare M on public data only)",
    "stopping": "stop after a fixed number of iterations, or on a criterion computed from released values only",
}


def warn_data_dependent(parameter: str, source: str, *, remedy: str | None = None, stacklevel: int = 2) -> LeakRecord:
    """Emit a :class:`PrivacyLeakWarning` for a data-dependent ``parameter`` and return its record.

    Call it wherever a user overrides a guard (e.g. insists on the median
    heuristic of the private rows), then pass the record to
    :func:`mark_not_private` on the resulting release.

    Parameters
    ----------
    parameter : str
        Name of the data-dependent input (e.g. ``"lengthscale"``).
    source : str
        How it was derived from the private data.
    remedy : str, optional
        The private alternative to suggest; by default the entry of
        :data:`REMEDIES` for ``parameter`` (empty if there is none).
    stacklevel : int, default 2
        Passed to :func:`warnings.warn`; 2 points the warning at the caller.

    Returns
    -------
    LeakRecord
        The record of the warning, for :func:`mark_not_private`.

    Examples
    --------
    >>> import warnings
    >>> from dpkme.privacy.leaks import PrivacyLeakWarning, warn_data_dependent
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     rec = warn_data_dependent("domain", "min/max of the private rows")
    >>> caught[0].category is PrivacyLeakWarning, rec.remedy.startswith("declare the box")
    (True, True)
    """
    rec = LeakRecord(str(parameter), str(source), REMEDIES.get(str(parameter), "") if remedy is None else str(remedy))
    warnings.warn(rec.message(), PrivacyLeakWarning, stacklevel=stacklevel)
    return rec


def _params_of(obj: object) -> dict[str, Any]:
    params = getattr(obj, "params", None)
    if not isinstance(params, dict):
        raise ValueError(
            f"{type(obj).__name__} has no params dict to record the leak in; expected a dpkme release "
            "(Release, GPRelease, DPKMeansResult, ClusterwiseRelease, TwoSampleResult).")
    return params


_T = TypeVar("_T")


def mark_not_private(obj: _T, reason: str | LeakRecord | Sequence[str | LeakRecord], *, warn: bool = True) -> _T:
    """Stamp a release as **not private**: ``params["private"] = False`` plus the reasons.

    Parameters
    ----------
    obj : release object
        Anything with a ``params`` dict (:class:`~dpkme.release.Release`,
        :class:`~dpkme.release.gp.GPRelease`, DP k-means results, two-sample
        results). :meth:`Release.metadata` and ``to_json`` then export the flag,
        and the app shows the release as not private.
    reason : str, LeakRecord or list of them
        Why the release is not private (at least one; strings must be
        non-empty). Appended to ``params["privacy_leaks"]``.
    warn : bool, default True
        Also emit a :class:`PrivacyLeakWarning`.

    Returns
    -------
    object
        ``obj`` itself, modified in place.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from dpkme.privacy.leaks import leak_reasons, mark_not_private
    >>> rel = mark_not_private(SimpleNamespace(params={}), "length scale from the private rows", warn=False)
    >>> rel.params["private"], leak_reasons(rel)
    (False, ['length scale from the private rows'])
    """
    params = _params_of(obj)
    reasons = reason if isinstance(reason, (list, tuple)) else [reason]
    if not reasons:
        raise ValueError("give at least one reason.")
    texts = []
    for r in reasons:
        if isinstance(r, LeakRecord):
            texts.append(r.message())
        elif isinstance(r, str) and r.strip():
            texts.append(r.strip())
        else:
            raise ValueError(f"a reason must be a non-empty string or a LeakRecord, got {r!r}.")
    params["private"] = False
    params["privacy_leaks"] = list(params.get("privacy_leaks", [])) + texts
    if warn:
        warnings.warn(f"{type(obj).__name__} marked as not private: " + "; ".join(texts), PrivacyLeakWarning,
                      stacklevel=2)
    return obj


def is_private(obj: object) -> bool:
    """False if :func:`mark_not_private` stamped ``obj`` (or it is a non-private reference result).

    Only the stamps are read; whether the noise source is private is
    :func:`privacy_claim`'s question.

    Parameters
    ----------
    obj : object
        A release or result; read are ``obj.params["private"]`` (if ``params``
        is a dict) and an attribute ``obj.private``.

    Returns
    -------
    bool
        False when either of them is ``False``, else True.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from dpkme.privacy.leaks import is_private
    >>> is_private(SimpleNamespace(params={})), is_private(SimpleNamespace(params={"private": False}))
    (True, False)
    """
    params = getattr(obj, "params", None)
    if isinstance(params, dict) and params.get("private") is False:
        return False
    return getattr(obj, "private", True) is not False  # False e.g. for the non-private kernel_kmeans reference


#: Noise sources that nobody can regenerate: fresh OS entropy (numpy's sampler seeded from the OS) and
#: OpenDP's vetted samplers (their own CSPRNG). ``"seeded"`` is a replayable teaching mode and
#: ``"generator"`` a caller-supplied :class:`numpy.random.Generator` whose state the library cannot vouch for.
PRIVATE_NOISE_SOURCES = ("os-entropy", "opendp")

NOT_PRIVATE_NOISE = {
    "seeded": "replayable demo, not private: the noise was drawn from a recorded seed, and anyone who knows the "
              "seed can regenerate the noise and subtract it",
    "generator": "the noise came from a caller-supplied random generator: it is private only if that generator's "
                 "state is secret and never reused, which the library cannot check",
}


def privacy_claim(obj: object) -> dict[str, Any]:
    r"""What a release's metadata may say about its privacy: ``{"differentially_private": bool, "not_private_because": [...]}``.

    A release is labelled differentially private only if (i) it has a finite :math:`\varepsilon`, (ii) nothing
    stamped it with :func:`mark_not_private`, and (iii) its noise came from a source nobody can regenerate
    (:data:`PRIVATE_NOISE_SOURCES`). So a file that says ``"differentially_private": true`` never holds a seed:
    seeded releases are replayable demos.

    Parameters
    ----------
    obj : release object
        Anything with ``noise_source``, ``epsilon`` and (optionally) a ``params`` dict.

    Returns
    -------
    dict
        ``{"differentially_private": bool}`` plus ``"not_private_because": list[str]`` when False.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> privacy_claim(SimpleNamespace(noise_source="os-entropy", epsilon=1.0, params={}))
    {'differentially_private': True}
    >>> privacy_claim(SimpleNamespace(noise_source="seeded", epsilon=1.0, params={}))["differentially_private"]
    False
    """
    reasons = list(leak_reasons(obj)) if not is_private(obj) else []
    if not reasons and not is_private(obj):
        reasons.append("marked as not private")
    source = getattr(obj, "noise_source", None)
    if source not in PRIVATE_NOISE_SOURCES:
        reasons.append(NOT_PRIVATE_NOISE.get(str(source), f"no privacy noise (noise source {source!r})"))
    eps = getattr(obj, "epsilon", None)
    if eps is None or not np.isfinite(eps) or eps <= 0:
        reasons.append(f"epsilon = {eps!r} is not a finite positive privacy level")
    out: dict[str, Any] = {"differentially_private": not reasons}
    if reasons:
        out["not_private_because"] = reasons
    return out


def leak_reasons(obj: object) -> list[str]:
    """The reasons recorded by :func:`mark_not_private` (empty if none).

    Parameters
    ----------
    obj : object
        A release or result; its ``params["privacy_leaks"]`` is read if
        ``params`` is a dict.

    Returns
    -------
    list of str
        A copy of the recorded reasons, oldest first.
    """
    params = getattr(obj, "params", None)
    return list(params.get("privacy_leaks", [])) if isinstance(params, dict) else []


def _close(a: float, b: float, rtol: float) -> bool:
    return bool(np.isfinite(a) and np.isfinite(b) and abs(a - b) <= rtol * max(abs(a), abs(b), 1e-300))


def find_data_dependent_inputs(X: npt.ArrayLike, *, lengthscale: float | None = None,
                               domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
                               center: npt.ArrayLike | None = None, scale: npt.ArrayLike | None = None,
                               points: npt.ArrayLike | None = None,
                               points_are_public_rows: bool = False, rtol: float = 1e-6,
                               warn: bool = False) -> list[LeakRecord]:
    r"""Heuristic check: do these "public" inputs coincide with statistics of the private ``X``?

    Flags (each as a :class:`LeakRecord`):

    * ``lengthscale`` within ``rtol`` of a median-heuristic value of ``X``
      (median pairwise distance, its square, :math:`/\sqrt2`, and the
      corresponding Gaussian :math:`\gamma`; on at most 2000 rows);
    * ``domain = (lower, upper)`` with a coordinate equal to ``X``'s min or max;
    * ``center`` equal (per coordinate, all of them) to ``X``'s mean or median,
      ``scale`` to its standard deviation (ddof 0 or 1), range or half-range;
    * ``points`` containing rows of ``X`` (unless ``points_are_public_rows``:
      a declared publishable subset is by definition public).

    This reads the private data and is for the data owner's screen. It finds
    coincidences only; a value derived in another way is not detected.
    ``warn=True`` also emits a :class:`PrivacyLeakWarning` per finding.

    Parameters
    ----------
    X : array (N, D)
        The private data (N >= 2).
    lengthscale : float, optional
        The kernel length scale the release uses.
    domain : (lower, upper), optional
        The declared box (numbers or length-D vectors).
    center : float or array (D,), optional
        Declared standardisation centre.
    scale : float or array (D,), optional
        Declared standardisation scale.
    points : array (M, D), optional
        Synthetic or initial points said to be public.
    points_are_public_rows : bool, default False
        ``points`` are a declared publishable subset of the rows (then rows of
        ``X`` among them are expected and not flagged).
    rtol : float, default 1e-6
        Relative tolerance of a coincidence, > 0.
    warn : bool, default False
        Also emit a :class:`PrivacyLeakWarning` per finding.

    Returns
    -------
    list of LeakRecord
        One record per flagged input (empty: nothing found).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.privacy.leaks import find_data_dependent_inputs
    >>> X = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> [r.parameter for r in find_data_dependent_inputs(X, domain=(X.min(axis=0), [10.0, 10.0]))]
    ['domain']
    >>> find_data_dependent_inputs(X, domain=(-10.0, 10.0))
    []
    """
    X = check_array(X, name="X", min_rows=2)
    rtol = check_positive_float(rtol, name="rtol")
    found: list[LeakRecord] = []
    with np.errstate(over="ignore", invalid="ignore"):  # huge data: overflowing statistics never match
        return _find(X, found, lengthscale, domain, center, scale, points, points_are_public_rows, rtol, warn)


def _find(X: npt.NDArray[np.float64], found: list[LeakRecord], lengthscale: float | None,
          domain: tuple[npt.ArrayLike, npt.ArrayLike] | None, center: npt.ArrayLike | None,
          scale: npt.ArrayLike | None, points: npt.ArrayLike | None, points_are_public_rows: bool, rtol: float,
          warn: bool) -> list[LeakRecord]:
    from ..kernels.median import median_heuristic_values


    def add(param: str, source: str) -> None:
        found.append(LeakRecord(param, source, REMEDIES.get(param, "")))

    if lengthscale is not None:
        ell = check_positive_float(lengthscale, name="lengthscale")
        if any(_close(ell, v, rtol) for v in median_heuristic_values(X)):
            add("lengthscale", "it equals a median heuristic of the private rows")
    if domain is not None:
        try:
            lo, hi = domain
        except (TypeError, ValueError):
            raise ValueError(f"domain must be a pair (lower, upper), got {domain!r}.") from None
        lo = np.broadcast_to(check_array(np.atleast_1d(lo), name="lower", ndim=1), (X.shape[1],))
        hi = np.broadcast_to(check_array(np.atleast_1d(hi), name="upper", ndim=1), (X.shape[1],))
        mins, maxs = X.min(axis=0), X.max(axis=0)
        hit = [j for j in range(X.shape[1]) if _close(lo[j], mins[j], rtol) or _close(hi[j], maxs[j], rtol)]
        if hit:
            add("domain", f"its bounds equal the private data's min/max in column(s) {hit}")
    stats_c = {"mean": X.mean(axis=0), "median": np.median(X, axis=0)}
    stats_s = {"standard deviation": X.std(axis=0), "standard deviation (ddof=1)": X.std(axis=0, ddof=1),
               "range": X.max(axis=0) - X.min(axis=0), "half-range": (X.max(axis=0) - X.min(axis=0)) / 2}
    for name, value, table in (("center", center, stats_c), ("scale", scale, stats_s)):
        if value is None:
            continue
        v = np.broadcast_to(check_array(np.atleast_1d(value), name=name, ndim=1), (X.shape[1],))
        for label, ref in table.items():
            if all(_close(float(a), float(b), rtol) for a, b in zip(v, ref)):
                add(name, f"it equals the private data's {label}")
                break
    if points is not None and not points_are_public_rows:
        P = check_array(points, name="points", n_features=X.shape[1])
        rows = {r.tobytes() for r in np.ascontiguousarray(X)}
        n_hit = sum(r.tobytes() in rows for r in np.ascontiguousarray(P))
        if n_hit:
            add("points", f"{n_hit} of the {P.shape[0]} points are rows of the private data "
                          "(declare them as a publishable subset if they really are public)")
    if warn:
        for rec in found:
            warnings.warn(rec.message(), PrivacyLeakWarning, stacklevel=4)
    return found


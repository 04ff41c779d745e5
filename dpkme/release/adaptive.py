r"""Adaptive kernel-mean-embedding release of a mixed table: AIM-style budget, JAX-fitted synthetic rows.

A third table mechanism next to Algorithms 1 and 2 (:func:`dpkme.release.tabular.release_table`). It spends
the privacy budget as AIM does (McKenna, Mullins, Sheldon & Miklau 2022): it measures every column once, then
repeatedly **selects** the worst-fitted query of a workload with the exponential mechanism, **measures** it
with the Gaussian mechanism, re-fits a synthetic table to all measurements so far, and **anneals** the
per-round budget when a measurement no longer changes the fit. Unlike AIM, a query on a set of columns
:math:`r` is a kernel mean embedding of the rows evaluated at public points, never a binning of continuous
values (:mod:`dpkme.release.fit`):

.. math::
    a_r(D) = \frac1N\sum_{x\in D}\phi_r(x), \qquad \phi_r(x) = \bigotimes_{j\in r}\phi_j(x),

with :math:`\phi_j` the one-hot vector of a discrete column's level, or, for a continuous column, a
Gaussian kernel evaluated at :math:`m` public landmarks of its declared range with each row's values
normalised to sum 1 (plus a missing coordinate where declared). Every :math:`\phi_r(x)` is nonnegative and
sums to 1; for discrete columns only, :math:`a_r` is the table of normalised cell counts. The landmarks per
arity, :math:`(m_1, m_2, m_3)`, follow the public rule :func:`default_landmarks` (from the noise of a first
measurement, i.e. from :math:`N`, the budget and the rounds); a 2- or 3-way query with more than
:data:`MAX_FEATURES` entries, or a 3-way query on a column wider than
:data:`dpkme.release.fit.MAX_WIDTH3`, is left out of the candidates (public rules of the schema).

Sensitivities (:math:`N` public under replace-one, declared under add-remove)
----------------------------------------------------------------------------
For nonnegative :math:`u, v` with :math:`\|u\|_1 = \|v\|_1 = 1`: :math:`\|u - v\|_1 \le 2` and
:math:`\|u - v\|_2^2 = \|u\|_2^2 + \|v\|_2^2 - 2\langle u, v\rangle \le 2` (since :math:`\|u\|_2 \le \|u\|_1`
and :math:`\langle u, v\rangle \ge 0`). Hence, for every query,

======================  ==========================  =========================
relation                L2 (measurement)            L1 score (selection)
======================  ==========================  =========================
replace-one             :math:`\sqrt2/N`            :math:`2/N`
add-remove              :math:`1/N`                 :math:`1/N`
======================  ==========================  =========================

Selection score
---------------
With :math:`\hat a_r` the current synthetic table's answer and :math:`\sigma_r` the noise a measurement of
:math:`r` would get this round,

.. math::
    q_r(D) = \|a_r(D) - \hat a_r\|_1 - \sqrt{2/\pi}\,\sigma_r C_r

(:math:`C_r` entries; the second term is the expected L1 norm of the noise the measurement would add, as in
AIM: queries already fitted to within their noise are not worth measuring). By the triangle inequality
:math:`q_r` changes by at most :math:`\Delta_q` of the table above between neighbours, the same for every
candidate, so choosing :math:`r` with probability :math:`\propto\exp(\varepsilon_t q_r / (2\Delta_q))`
(done as report-noisy-max with Gumbel noise, which has exactly this distribution) is
:math:`\varepsilon_t`-DP, hence :math:`\varepsilon_t^2/8`-zCDP (Cesar & Rogers 2021).

Measurement and composition
---------------------------
Round :math:`t` measures with :math:`\sigma_r = \Delta_{2}/\sqrt{2\rho_t}`: :math:`\rho_t`-zCDP. The
budget :math:`\rho` is split as in AIM: with :math:`T` rounds (:func:`default_rounds`),
:math:`\rho_t = 0.9\rho/T` for a measurement and :math:`\varepsilon_t^2/8 = 0.1\rho/T` for a selection; the
:math:`p` columns are measured first; when the fit moved by less than the measurement's expected noise norm
(L1), :math:`\sigma` is halved and :math:`\varepsilon_t` doubled (both parts cost 4 times more); when less
than two rounds' worth is left, the last round spends exactly what remains. zCDP composes by adding
:math:`\rho`, also when the parts are chosen adaptively and the sum is kept within :math:`\rho` by such a
filter (Feldman & Zrnic 2021; Whitehouse et al. 2023), so the release is :math:`\rho`-zCDP and therefore
:math:`(\rho + 2\sqrt{\rho\ln(1/\delta)},\ \delta)`-DP (Bun & Steinke 2016, Prop. 1.3).
:func:`zcdp_rho` gives the largest :math:`\rho` whose conversion is at most :math:`\varepsilon` (rounded
toward more noise), so the whole :math:`(\varepsilon, \delta)` is known before any row is read
(:func:`adaptive_release_charge`). Every decision -- landmarks, candidates, rounds, annealing, the fit, the
decoding -- reads only the noisy measurements and public quantities.

The private rows are read once, in blocks of :data:`BLOCK_ROWS` rows (each block encoded, its features
summed, then dropped), to compute the true answers of all candidates; only :class:`_Oracle` holds them.

Synthetic rows
--------------
The rows are fitted by gradient in JAX (:class:`dpkme.release.fit.RelaxedFit`) to all noisy measurements
jointly (each weighted by :math:`1/\sigma^2`), starting from rows drawn from the measured 1-way marginals and
warm-started round after round, then decoded to rows of the declared columns and types: post-processing of
the measurements.

Examples
--------
>>> import pandas as pd
>>> from dpkme.schema import ColumnSpec, TableSchema
>>> from dpkme.release.adaptive import adaptive_release, adaptive_release_charge
>>> schema = TableSchema([ColumnSpec("age", "integer", lower=18, upper=90),
...                       ColumnSpec("smoker", "boolean")])
>>> df = pd.DataFrame({"age": [25, 40, 61, 33] * 50, "smoker": [True, False, False, True] * 50})
>>> c = adaptive_release_charge(schema=schema, n_private=200, epsilon=1.0, delta=1e-6)
>>> (c.mechanism, c.epsilon, c.delta)
('approx-dp', 1.0, 1e-06)
>>> rel = adaptive_release(df, schema=schema, epsilon=1.0, delta=1e-6, synthetic_rows=200)  # doctest: +SKIP
>>> bool(rel.rows["age"].between(18, 90).all()), rel.charge.epsilon                        # doctest: +SKIP
(True, 1.0)
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import (
    _short,
    check_delta,
    check_epsilon,
    check_in,
    check_positive_int,
    check_random_state,
    public_size,
    spawn_streams,
)
from ..privacy.accounting import PrivacyCharge
from ..privacy.leaks import NOT_PRIVATE_NOISE, PRIVATE_NOISE_SOURCES
from ..privacy.result import charge_record
from ..privacy.sensitivity import NEIGHBOURING
from ..privacy.spec import NeighbouringRelation
from .fit import LANDMARKS, MAX_WIDTH3, RelaxedDomain, RelaxedFit

__all__ = ["MECHANISM_NAME", "SELECTION_SHARE", "MAX_FEATURES", "BLOCK_ROWS", "LANDMARK_NOISE", "ROUNDS_PER_COLUMN",
           "default_landmarks", "MAX_CANDIDATES", "zcdp_rho",
           "zcdp_epsilon", "default_rounds", "default_synthetic_rows", "default_workload",
           "adaptive_release_charge", "adaptive_release", "AdaptiveTableRelease"]

#: The mechanism's name in metadata and charges.
MECHANISM_NAME = "adaptive-kme"
#: Share of each round's zCDP budget spent on the selection (the rest on the measurement), as in AIM.
SELECTION_SHARE = 0.1
#: A 2- or 3-way query with more entries than this (product of its columns' widths) is left out of the
#: candidates (a public rule of the schema).
MAX_FEATURES = 2048
#: The constant :math:`c` of :func:`default_landmarks` (noise L1 norm of a first measurement about 0.8 c).
LANDMARK_NOISE = 0.6
#: Rows per block of the one pass over the private table (memory bounded in N).
BLOCK_ROWS = 8192
#: Bounds of :func:`default_synthetic_rows`.
SYNTHETIC_ROWS = (1000, 1000)
#: Rounds per column of :func:`default_rounds`.
ROUNDS_PER_COLUMN = 2
#: Most candidates of the default workload (all 1- and 2-way subsets, then 3-way ones up to this).
MAX_CANDIDATES = 200
_DECODE = ("sample", "argmax")


# --------------------------------------------------------------------------- zCDP <-> (epsilon, delta)
#: Relative margin by which :func:`zcdp_rho` lowers its target :math:`\varepsilon` (toward more noise).
RHO_MARGIN = 1e-12


def zcdp_epsilon(rho: float, delta: float) -> float:
    r""":math:`\varepsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}`: a :math:`\rho`-zCDP mechanism is
    :math:`(\varepsilon, \delta)`-DP (Bun & Steinke 2016, Prop. 1.3).

    Parameters
    ----------
    rho : float
        The zCDP parameter :math:`\rho \ge 0`.
    delta : float
        The target :math:`\delta` in :math:`(0, 1)`.

    Returns
    -------
    float
        The :math:`\varepsilon` of the conversion.

    Examples
    --------
    >>> round(zcdp_epsilon(0.5, 1e-6), 4)
    5.7565
    """
    if not (math.isfinite(rho) and rho >= 0):
        raise ValueError(f"rho must be a finite number >= 0, got {_short(rho)}.")
    delta = check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_rho(epsilon: float, delta: float) -> float:
    r"""The largest :math:`\rho` with :func:`zcdp_epsilon` :math:`(\rho, \delta) \le \varepsilon`.

    :math:`\rho = \bigl(\sqrt{L + \varepsilon} - \sqrt L\bigr)^2 = \varepsilon^2/(\sqrt{L+\varepsilon}+\sqrt L)^2`
    with :math:`L = \ln(1/\delta)` (the stable form), computed for :math:`\varepsilon(1 - 10^{-12})`
    (:data:`RHO_MARGIN`) and lowered float by float until the conversion, evaluated in floating point, is at
    most that: rounding toward more noise, so that the conversion is at most :math:`\varepsilon` in exact
    arithmetic too (its floating-point error is about :math:`10^{-16}` relative).

    Parameters
    ----------
    epsilon : float
        The target :math:`\varepsilon > 0`.
    delta : float
        The target :math:`\delta` in :math:`(0, 1)`.

    Returns
    -------
    float
        The zCDP parameter :math:`\rho`.

    Examples
    --------
    >>> rho = zcdp_rho(1.0, 1e-6)
    >>> round(rho, 6), zcdp_epsilon(rho, 1e-6) <= 1.0
    (0.017469, True)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    L = math.log(1.0 / delta)
    # the target lowered by 1e-12 (relative): the float check below then also holds in exact arithmetic (the
    # conversion's rounding error is ~1e-16 relative), which the float comparison alone does not guarantee
    target = epsilon * (1.0 - RHO_MARGIN)
    rho = target ** 2 / (math.sqrt(L + target) + math.sqrt(L)) ** 2
    while rho > 0 and zcdp_epsilon(rho, delta) > target:
        rho = math.nextafter(rho, 0.0)
    return rho


# --------------------------------------------------------------------------- public rules
def default_rounds(n_columns: int) -> int:
    """The public default number of rounds :math:`T` (the :math:`p` initial measurements included):
    :math:`\\min(\\max(Rp, 12), 48)` with :math:`R` = :data:`ROUNDS_PER_COLUMN`.

    AIM uses :math:`16p`; every round here re-fits the synthetic rows, so fewer, larger rounds (each column
    measured first takes :math:`0.9/T` of the budget; about :math:`(R-1)p` selections remain before
    annealing).

    Parameters
    ----------
    n_columns : int
        Number of columns :math:`p` of the table.

    Returns
    -------
    int
        The number of rounds :math:`T`.

    Examples
    --------
    >>> default_rounds(8), default_rounds(2), default_rounds(30)
    (16, 12, 48)
    """
    p = check_positive_int(n_columns, name="n_columns")
    return int(min(max(ROUNDS_PER_COLUMN * p, 12), 48))


def default_synthetic_rows(n_private: int) -> int:
    """The public default number of synthetic (relaxed) rows: :math:`N` clipped to :data:`SYNTHETIC_ROWS`
    (1000 at present, whatever :math:`N`).

    The fit's cost grows with these rows, not with :math:`N`; more released rows are drawn from them with
    :meth:`AdaptiveTableRelease.sample` (each relaxed row is a product distribution, so draws differ).

    Parameters
    ----------
    n_private : int
        Public (replace-one) or declared (add-remove) size :math:`N` of the private table.

    Returns
    -------
    int
        The number of synthetic rows.

    Examples
    --------
    >>> default_synthetic_rows(344), default_synthetic_rows(30000)
    (1000, 1000)
    """
    n = check_positive_int(n_private, name="n_private")
    return int(min(max(n, SYNTHETIC_ROWS[0]), SYNTHETIC_ROWS[1]))


def default_landmarks(sigma: float) -> tuple[int, int, int]:
    r"""The public numbers of landmarks :math:`(m_1, m_2, m_3)` of a continuous column in a 1-, 2- and 3-way
    query: :math:`m_k = \operatorname{round}((c/\sigma)^{1/k})` with :math:`c` = :data:`LANDMARK_NOISE`,
    clipped to :math:`[3, M_k]` with :math:`(M_1, M_2, M_3)` = :data:`dpkme.release.fit.LANDMARKS`.

    :math:`\sigma` is the noise per entry of a first-round measurement (public: from :math:`N`, the budget and
    the rounds). The L1 norm of the noise of a query on :math:`k` continuous columns is about
    :math:`\sqrt{2/\pi}\,\sigma m^k`, while its resolution error falls like :math:`1/m`: the rule keeps the
    noise's L1 norm near :math:`0.8c`, so a small table or budget gets coarser (less noisy) features and a
    large one finer features.

    Parameters
    ----------
    sigma : float
        Noise standard deviation per entry of a first-round measurement (not finite or :math:`\le 0`: the
        upper bounds).

    Returns
    -------
    (int, int, int)

    Examples
    --------
    >>> default_landmarks(0.039), default_landmarks(0.0013), default_landmarks(0.0)
    ((15, 4, 3), (32, 16, 6), (32, 16, 6))
    """
    if not (math.isfinite(sigma) and sigma > 0):
        return tuple(LANDMARKS)  # type: ignore[return-value]
    return tuple(int(min(max(round((LANDMARK_NOISE / sigma) ** (1.0 / k)), 3), LANDMARKS[k - 1]))
                 for k in (1, 2, 3))  # type: ignore[return-value]


def _check_schema(schema: Any) -> Any:
    from ..schema import TableSchema

    if schema is None:
        raise ValueError("schema is required: declare the table's columns with a dpkme.schema.TableSchema "
                         "(e.g. dpkme.datasets.load_schema(name) for a bundled table).")
    if not isinstance(schema, TableSchema):
        raise ValueError(f"schema must be a dpkme.schema.TableSchema, got {_short(schema)}.")
    return schema


def default_workload(schema: Any, *, max_candidates: int = MAX_CANDIDATES) -> list[tuple[str, ...]]:
    """All 1- and 2-way column subsets, then 3-way ones (nearest in the schema's order first) up to ``max_candidates``.

    A rule of the schema alone (public).

    Parameters
    ----------
    schema : TableSchema
        The declared schema.
    max_candidates : int, default=MAX_CANDIDATES
        Most subsets in the workload (never fewer than the number of columns).

    Returns
    -------
    list of tuple of str
        The column subsets.

    Examples
    --------
    >>> from dpkme.datasets import load_schema
    >>> w = default_workload(load_schema("penguins"))
    >>> len(w), w[0], w[8], w[-1]
    (92, ('species',), ('species', 'island'), ('species', 'sex', 'year'))
    """
    schema = _check_schema(schema)
    names = schema.names
    p = len(names)
    out: list[tuple[str, ...]] = [(n,) for n in names]
    out += [(names[i], names[j]) for i, j in itertools.combinations(range(p), 2)]
    triples = sorted(itertools.combinations(range(p), 3), key=lambda t: (t[2] - t[0], t))
    for t in triples:
        if len(out) >= max(max_candidates, p):
            break
        out.append(tuple(names[i] for i in t))
    return out


def _check_workload(workload: Any, schema: Any) -> list[tuple[int, ...]]:
    names = list(schema.names)
    if workload is None:
        workload = default_workload(schema)
    if isinstance(workload, (str, bytes)):
        raise ValueError(f"workload must be a sequence of column-name tuples, got {_short(workload)}.")
    out: list[tuple[int, ...]] = [(i,) for i in range(len(names))]
    for sub in workload:
        cols = (sub,) if isinstance(sub, str) else tuple(sub)
        if not 1 <= len(cols) <= 3:
            raise ValueError(f"a workload subset names 1 to 3 columns, got {_short(sub)}.")
        bad = [c for c in cols if c not in names]
        if bad:
            raise ValueError(f"workload subset {_short(sub)} names column(s) {bad} that the schema does not "
                             f"declare; its columns are {names}.")
        idx = tuple(sorted({names.index(c) for c in cols}))
        if idx not in out:
            out.append(idx)
    return out


def adaptive_release_charge(*, schema: Any = None, n_columns: int | None = None, n_private: int, epsilon: float,
                            delta: float, neighbouring: str = "replace-one", rounds: int | None = None,
                            label: str | None = None) -> PrivacyCharge:
    r"""The charge of :func:`adaptive_release` with these public parameters, before any row is read.

    The release is :math:`\rho`-zCDP with :math:`\rho` = :func:`zcdp_rho` :math:`(\varepsilon, \delta)`, hence
    :math:`(\varepsilon, \delta)`-DP: one ``"approx-dp"`` charge of the whole :math:`(\varepsilon, \delta)`.
    ``details`` records :math:`\rho`, the rounds and the budget rule; a finished release adds the realised
    parts (``details["parts_itemised"]``: every selection and measurement with its :math:`\rho`).

    Parameters
    ----------
    schema : TableSchema, optional
        The declared schema (or give ``n_columns``).
    n_columns : int, optional
        Number of columns :math:`p` (when no schema is given).
    n_private : int
        Public (replace-one) or declared (add-remove) size :math:`N`.
    epsilon, delta : float
        The target :math:`(\varepsilon, \delta)`; :math:`\delta > 0`.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation.
    rounds : int, optional
        Rounds :math:`T` (default :func:`default_rounds`).
    label : str, optional
        The charge's label.

    Returns
    -------
    PrivacyCharge

    Examples
    --------
    >>> c = adaptive_release_charge(n_columns=8, n_private=344, epsilon=3.0, delta=1e-6)
    >>> c.mechanism, c.epsilon, c.details["rounds"], round(c.details["rho"], 4)
    ('approx-dp', 3.0, 16, 0.1473)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    neighbouring = check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    n_private = check_positive_int(n_private, name="n_private")
    if schema is not None:
        p = len(_check_schema(schema))
    elif n_columns is not None:
        p = check_positive_int(n_columns, name="n_columns")
    else:
        raise ValueError("give the schema (or n_columns) of the table.")
    T = default_rounds(p) if rounds is None else check_positive_int(rounds, name="rounds")
    if T < p + 1:
        raise ValueError(f"rounds={T} is too few for {p} columns: the columns are measured first, so rounds must "
                         f"be at least {p + 1}.")
    rho = zcdp_rho(epsilon, delta)
    details = {"mechanism": MECHANISM_NAME, "function": "adaptive_release", "accounting": "zCDP",
               "rho": rho, "conversion": "rho + 2*sqrt(rho*ln(1/delta)) (Bun & Steinke 2016, Prop. 1.3)",
               "rounds": T, "n_columns": p, "n_private": n_private, "selection_share": SELECTION_SHARE,
               "budget_rule": "per round rho/T: 0.9 measurement (Gaussian), 0.1 selection (exponential "
                              "mechanism, eps_t^2/8); columns measured first; x4 when annealed; the last round "
                              "spends the remainder"}
    return PrivacyCharge(label=label or f"Adaptive KME table release (eps={epsilon:g})", mechanism="approx-dp",
                         epsilon=epsilon, delta=delta, relation=NeighbouringRelation.parse(neighbouring),
                         details=details)


# --------------------------------------------------------------------------- the private side
class _Oracle:
    """The only holder of statistics of the private rows: answers selections and measurements with noise.

    ``true`` holds :math:`a_r(D)` of every candidate; ``rng`` is the private noise stream. Nothing else on
    the release's path reads the rows (the tests replace this class by a replay of recorded answers).
    """

    def __init__(self, true: list[np.ndarray], rng: np.random.Generator) -> None:
        self._true = true
        self._rng = rng

    def select(self, model: list[np.ndarray], biases: np.ndarray, epsilon: float, sensitivity: float) -> int:
        q = np.array([float(np.abs(t - m).sum()) for t, m in zip(self._true, model)]) - biases
        g = self._rng.gumbel(size=q.size)
        return int(np.argmax(epsilon * q / (2.0 * sensitivity) + g))

    def measure(self, index: int, sigma: float) -> np.ndarray:
        t = self._true[index]
        return np.asarray(t + self._rng.normal(0.0, sigma, size=t.shape))


# --------------------------------------------------------------------------- the release
@dataclass
class AdaptiveTableRelease:
    """The result of :func:`adaptive_release` (a :class:`~dpkme.privacy.result.PrivateResult`).

    Parameters
    ----------
    schema : TableSchema
        The declared schema of the table.
    rows : pandas.DataFrame
        The synthetic rows (the schema's columns and types).
    charge : PrivacyCharge
        The whole release's charge (:func:`adaptive_release_charge` plus the realised parts).
    epsilon : float
        The release's :math:`\\varepsilon`.
    delta : float
        The release's :math:`\\delta`.
    neighbouring : {"replace-one", "add-remove"}
        Neighbouring relation.
    n_private : int
        Public (replace-one) or declared (add-remove) size :math:`N` of the private table.
    rho : float
        The zCDP budget :math:`\\rho` (:func:`zcdp_rho` of ``epsilon``, ``delta``).
    rounds : list of dict
        Per round: the measured columns, the query kind (``"cells"``: discrete columns only; ``"kernel"``:
        with landmark features), the :math:`\\rho` of the selection and of the
        measurement, :math:`\\sigma`, whether the budget was annealed after it.
    measurements : list of dict
        The noisy measurements (public: the release's privatised statistics).
    n_candidates : int, default=0
        Number of candidate queries (column subsets) of the workload.
    seed : int, optional
        The seed of a seeded (replayable, not private) demo release; None for a real release.
    noise_source : {"os-entropy", "seeded", "generator"}, default="os-entropy"
        Where the noise came from: fresh OS entropy (a real release), a recorded seed, or a caller-supplied
        :class:`numpy.random.Generator` (replayable by whoever holds it; not private,
        :data:`dpkme.privacy.leaks.PRIVATE_NOISE_SOURCES`).
    decode : {"sample", "argmax"}, default="sample"
        How a relaxed row's levels become one level (also used by :meth:`sample`).
    _fit : RelaxedFit, optional
        Internal: the fitted relaxed table, kept for :meth:`sample`.
    """

    schema: Any
    rows: pd.DataFrame
    charge: PrivacyCharge
    epsilon: float
    delta: float
    neighbouring: str
    n_private: int
    rho: float
    rounds: list[dict[str, Any]]
    measurements: list[dict[str, Any]] = field(repr=False)
    n_candidates: int = 0
    seed: int | None = None
    noise_source: str = "os-entropy"
    decode: str = "sample"
    _fit: Any = field(default=None, repr=False)

    @property
    def differentially_private(self) -> bool:
        """False for a seeded (replayable) demo, noise from a caller's generator, or a schema read from the
        private rows."""
        return (self.seed is None and self.noise_source in PRIVATE_NOISE_SOURCES
                and not self.schema.data_dependent)

    def sample(self, n: int, rng: Any = None) -> pd.DataFrame:
        """``n`` further rows of the fitted synthetic table (post-processing: no privacy cost).

        Rows of the relaxed table are drawn uniformly with replacement and decoded again (levels drawn from
        each row's probabilities).

        Parameters
        ----------
        n : int
            Number of rows.
        rng : None, int or numpy.random.Generator
            Randomness of the draw (fresh OS entropy by default).

        Returns
        -------
        pandas.DataFrame
        """
        n = check_positive_int(n, name="n")
        gen, _ = check_random_state(rng)
        rows = gen.integers(0, self._fit.n_rows, size=n)
        return self._fit.decode(gen, method=self.decode, rows=rows)

    def metadata(self) -> dict[str, Any]:
        """JSON-serialisable description (no seed for a real release)."""
        d: dict[str, Any] = {
            "kind": "table", "mechanism": MECHANISM_NAME,
            "description": "adaptive kernel-mean-embedding release (AIM-style selection and annealing, "
                           "Gaussian measurements of localised kernel embeddings (cell counts, landmark "
                           "features), rows fitted in JAX)",
            "epsilon": self.epsilon, "delta": self.delta, "neighbouring": self.neighbouring,
            "n_private": self.n_private, "rho": self.rho, "accounting": "zCDP",
            "n_rounds": len(self.rounds), "rounds": self.rounds, "n_candidates": self.n_candidates,
            "n_synthetic": int(len(self.rows)), "decode": self.decode,
            "differentially_private": self.differentially_private,
            "columns": list(self.schema.names), "schema": self.schema.to_dict(),
            "charge": charge_record(self.charge),
        }
        if self.seed is not None:
            d["seed"] = self.seed
            d["seed_warning"] = ("seeded noise (teaching/demo): anyone who knows this seed can regenerate and "
                                 "remove the noise, so this release is not private once the seed is shared")
        d["noise_source"] = self.noise_source
        reasons = []
        if self.noise_source not in PRIVATE_NOISE_SOURCES and self.seed is None:
            reasons.append(NOT_PRIVATE_NOISE.get(self.noise_source, f"noise source {self.noise_source!r}"))
        if self.schema.data_dependent:
            reasons.append("the schema declares values read from the private rows "
                           f"({list(self.schema.data_dependent)})")
        if reasons:
            d["not_private_reason"] = "; ".join(reasons)
        return d

    def to_json(self) -> str:
        """:meth:`metadata` as JSON text."""
        return json.dumps(self.metadata(), default=_json_default)


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def adaptive_release(df_or_encoded: Any, *, schema: Any = None, epsilon: float, delta: float, workload: Any = None,
                     rounds: int | None = None, random_state: Any = None, neighbouring: str = "replace-one",
                     n_private: int | None = None, synthetic_rows: int | None = None,
                     decode: str = "sample", round_steps: int | None = None,
                     final_steps: int | None = None) -> AdaptiveTableRelease:
    r"""Adaptive KME release of a mixed table (module docstring): selected, measured, fitted, decoded.

    Parameters
    ----------
    df_or_encoded : pandas.DataFrame, array (N, D) or iterator of pandas.DataFrame
        The private table, its rows already embedded by ``schema.encode``, or an iterator of chunks of it
        (e.g. ``pandas.read_csv(path, chunksize=100_000)``; ``n_private`` then required): the one pass over
        the private rows reads them in blocks of :data:`BLOCK_ROWS` rows, so a stream of chunks is released
        in memory bounded by the chunk size, whatever :math:`N`.
    schema : TableSchema
        The declared schema (required).
    epsilon, delta : float
        The guarantee: :math:`(\varepsilon, \delta)`-DP, :math:`\delta > 0` (through :math:`\rho`-zCDP).
    workload : sequence of tuples of column names, optional
        Candidate column subsets (1 to 3 columns); every single column is added. Default
        :func:`default_workload`.
    rounds : int, optional
        Rounds :math:`T` (default :func:`default_rounds`; at least :math:`p + 1`).
    random_state : None, int or numpy.random.Generator
        ``None`` (a real release): fresh OS entropy for the noise and for the public draws, nothing
        recorded. An int: a replayable demo, labelled not private.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation.
    n_private : int, optional
        The public size :math:`N`: counted from the rows under replace-one (must match if given), required
        (declared) under add-remove and for an iterator of chunks.
    synthetic_rows : int, optional
        Rows of the fitted synthetic table (default :func:`default_synthetic_rows`).
    decode : {"sample", "argmax"}, default="sample"
        How a relaxed row's levels become one level (:meth:`dpkme.release.fit.RelaxedFit.decode`).
    round_steps, final_steps : int, optional
        Adam steps after each measurement and at the end (post-processing; default
        :data:`dpkme.release.fit.ROUND_STEPS`, :data:`dpkme.release.fit.FINAL_STEPS`).

    Returns
    -------
    AdaptiveTableRelease

    Raises
    ------
    ValueError
        A missing or wrong schema, :math:`\varepsilon \le 0`, :math:`\delta` outside :math:`(0, 1)`, a bad
        workload, too few rounds, or an undeclared size under add-remove (the message names the value).
    """
    schema = _check_schema(schema)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    neighbouring = check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    decode = check_in(decode, _DECODE, name="decode")
    from . import fit as _fit

    round_steps = check_positive_int(_fit.ROUND_STEPS if round_steps is None else round_steps, name="round_steps")
    final_steps = check_positive_int(_fit.FINAL_STEPS if final_steps is None else final_steps, name="final_steps")
    frame: pd.DataFrame | None = None
    Z: np.ndarray | None = None
    chunks: Any = None
    if isinstance(df_or_encoded, Iterator) and not isinstance(df_or_encoded, (pd.DataFrame, np.ndarray)):
        # a stream of DataFrame chunks (e.g. pandas.read_csv(..., chunksize=...)): N must be declared, since
        # the charge is fixed before any row is read; the rows are counted during the pass and checked
        if n_private is None:
            raise ValueError("n_private is required when the private table is given as an iterator of chunks: "
                             "the charge (and the noise scale) depend on N and are fixed before any row is read.")
        chunks = df_or_encoded
        n_rows = check_positive_int(n_private, name="n_private")
    elif isinstance(df_or_encoded, pd.DataFrame):
        frame = df_or_encoded
        if len(frame) == 0 and neighbouring == "replace-one":
            raise ValueError("the private table has no rows.")
        if len(frame):
            schema.encode(frame.iloc[:1])        # fails early (ValueError naming the column) on a bad table
        n_rows = len(frame)                      # add-remove: 0 rows is a neighbour of 1 row (N is declared)
    else:
        Z = np.asarray(df_or_encoded, dtype=np.float64)
        if Z.ndim != 2 or Z.shape[1] != schema.dim or (Z.shape[0] == 0 and neighbouring == "replace-one") \
                or not np.isfinite(Z).all():
            raise ValueError(f"encoded rows must be a finite (N, {schema.dim}) array (schema.encode), got shape "
                             f"{Z.shape}.")
        n_rows = Z.shape[0]
    N = public_size(n_rows, n_private, neighbouring=neighbouring)
    p = len(schema)
    charge = adaptive_release_charge(schema=schema, n_private=N, epsilon=epsilon, delta=delta,
                                     neighbouring=neighbouring, rounds=rounds)
    T = charge.details["rounds"]
    rho_total = charge.details["rho"]
    n_syn = default_synthetic_rows(N) if synthetic_rows is None else check_positive_int(
        synthetic_rows, name="synthetic_rows")
    subsets = _check_workload(workload, schema)

    l2_sens = (math.sqrt(2.0) if neighbouring == "replace-one" else 1.0) / N
    score_sens = (2.0 if neighbouring == "replace-one" else 1.0) / N
    rng, seed = check_random_state(random_state)
    private_rng, public_rng = spawn_streams(rng, 2, fresh=random_state is None)

    # public: the candidates' queries (sizes, sensitivities) from the schema alone
    sigma0 = l2_sens / math.sqrt(2.0 * (1.0 - SELECTION_SHARE) * rho_total / T)    # a first measurement's noise
    dom = RelaxedDomain(schema, default_landmarks(sigma0))
    eligible3 = [dom.width(j, 3) <= MAX_WIDTH3 for j in range(p)]
    cands: list[dict[str, Any]] = []
    for sub in subsets:
        k = len(sub)
        if k > 1 and (dom.query_size(sub) > MAX_FEATURES or (k == 3 and not all(eligible3[j] for j in sub))):
            continue                      # a public rule: too many features, or a column too wide for 3-way
        kind = "cells" if all(dom.columns[j].discrete for j in sub) else "kernel"
        cands.append({"subset": sub, "kind": kind, "size": dom.query_size(sub), "l2": l2_sens})
    n_triples = sum(len(c["subset"]) == 3 for c in cands)

    # private: the true answers of every candidate, in one pass over blocks of rows (memory bounded in N)
    sums = [np.zeros(c["size"]) for c in cands]
    subs = [c["subset"] for c in cands]
    if chunks is not None:
        seen = 0
        for chunk in chunks:
            if not isinstance(chunk, pd.DataFrame):
                raise ValueError(f"an iterator of chunks must yield pandas DataFrames, got {_short(chunk)}.")
            for start in range(0, len(chunk), BLOCK_ROWS):
                dom.accumulate(dom.hard_states(schema.encode(chunk.iloc[start:start + BLOCK_ROWS])), subs, sums)
            seen += len(chunk)
        if neighbouring == "replace-one" and seen != N:
            raise ValueError(f"n_private={N} is declared but the chunks held {seen} rows; under replace-one N is "
                             "the table's row count.")
    for start in range(0, n_rows if chunks is None else 0, BLOCK_ROWS):
        if frame is not None:
            Zb = schema.encode(frame.iloc[start:start + BLOCK_ROWS])
        else:
            assert Z is not None
            Zb = Z[start:start + BLOCK_ROWS]
        dom.accumulate(dom.hard_states(Zb), subs, sums)
        del Zb
    oracle = _Oracle([s / float(N) for s in sums], private_rng)
    del sums, frame, Z, chunks

    # 3-way slots: half the selections at most (public); more 3-way measurements cost one recompilation
    fit = RelaxedFit(dom, n_syn, public_rng, eligible3=eligible3, slots3=max(1, min(n_triples, (T - p + 1) // 2)))
    names = schema.names

    def sigma_of(c: dict[str, Any], rho_m: float) -> float:
        return float(c["l2"]) / math.sqrt(2.0 * rho_m)

    def bias_of(c: dict[str, Any], sigma: float) -> float:
        return math.sqrt(2.0 / math.pi) * sigma * float(c["size"])

    rho_budget = rho_total * (1.0 - 1e-12)        # the parts add up to at most rho_total despite rounding
    rho_meas = (1.0 - SELECTION_SHARE) * rho_budget / T
    rho_sel = SELECTION_SHARE * rho_budget / T
    used = 0.0
    log: list[dict[str, Any]] = []
    measurements: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for i in range(p):                       # every column first (measurement only)
        c = cands[i]
        sigma = sigma_of(c, rho_meas)
        y = oracle.measure(i, sigma)
        fit.add(c["subset"], y, sigma)
        used += rho_meas
        parts.append({"round": i + 1, "part": "measure", "columns": [names[j] for j in c["subset"]],
                      "rho": rho_meas})
        log.append({"round": i + 1, "step": "initial", "columns": [names[j] for j in c["subset"]],
                    "query": c["kind"], "rho_select": 0.0, "rho_measure": rho_meas, "sigma": sigma,
                    "annealed": False})
        measurements.append({"candidate": i, "columns": [names[j] for j in c["subset"]], "query": c["kind"],
                             "sigma": sigma, "value": y})
        fit.initialise(c["subset"][0], y, public_rng)       # start from the measured marginals
    fit.fit(round_steps)
    t = p
    while True:
        t += 1
        last = False
        remaining = rho_budget - used
        if remaining < 2.0 * (rho_meas + rho_sel):
            rho_meas = (1.0 - SELECTION_SHARE) * remaining
            rho_sel = SELECTION_SHARE * remaining
            last = True
        if rho_meas <= 0.0 or rho_sel <= 0.0:
            break
        used += rho_meas + rho_sel
        eps_sel = math.sqrt(8.0 * rho_sel)
        model = fit.answers(subs)
        biases = np.array([bias_of(c, sigma_of(c, rho_meas)) for c in cands])
        k = oracle.select(model, biases, eps_sel, score_sens)
        c = cands[k]
        sigma = sigma_of(c, rho_meas)
        y = oracle.measure(k, sigma)
        fit.add(c["subset"], y, sigma)
        before = model[k]
        fit.fit(round_steps)
        after = fit.answers([c["subset"]])[0]
        cols = [names[j] for j in c["subset"]]
        parts += [{"round": t, "part": "select", "rho": rho_sel, "epsilon": eps_sel},
                  {"round": t, "part": "measure", "columns": cols, "rho": rho_meas}]
        annealed = (not last) and float(np.abs(after - before).sum()) <= bias_of(c, sigma)
        log.append({"round": t, "step": "select", "columns": cols, "query": c["kind"], "rho_select": rho_sel,
                    "epsilon_select": eps_sel, "rho_measure": rho_meas, "sigma": sigma, "annealed": bool(annealed)})
        measurements.append({"candidate": k, "columns": cols, "query": c["kind"], "sigma": sigma, "value": y})
        if last:
            break
        if annealed:
            rho_meas *= 4.0
            rho_sel *= 4.0
    fit.fit(final_steps, settle=True)
    rows = fit.decode(public_rng, method=decode)
    spent = math.fsum(q["rho"] for q in parts)
    details = dict(charge.details)
    details["parts_itemised"] = parts
    details["rho_spent"] = spent
    result_charge = charge.with_(details=details)
    return AdaptiveTableRelease(schema=schema, rows=rows, charge=result_charge, epsilon=epsilon, delta=delta,
                                neighbouring=neighbouring, n_private=N, rho=rho_total, rounds=log,
                                measurements=measurements, n_candidates=len(cands),
                                seed=seed if isinstance(random_state, (int, np.integer)) else None,
                                noise_source=("os-entropy" if random_state is None else
                                              "seeded" if isinstance(random_state, (int, np.integer)) else
                                              "generator"),
                                decode=decode, _fit=fit)

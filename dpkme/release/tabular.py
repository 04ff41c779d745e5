r"""Private releases of mixed tables (numeric, integer, categorical, boolean and date columns).

A declared :class:`~dpkme.schema.TableSchema` maps every row :math:`x` to a public embedding
:math:`e(x) \in \mathbb R^D` (continuous, integer and date columns scaled by their declared range and
lengthscale, categorical ones as scaled one-hot blocks). The schema's own kernel is the Gaussian kernel
on embedded rows,

.. math::
    k(x, y) = \exp\bigl(-\tfrac12\|e(x) - e(y)\|_2^2\bigr)
            = \prod_{j\ \text{numeric}} \exp\Bigl(-\frac{(x_j - y_j)^2}{2\ell_j^2(u_j - l_j)^2}\Bigr)
              \prod_{c\ \text{categorical}} \kappa_c^{[x_c \ne y_c]},

so :math:`0 < k \le 1 = k(x, x)`. A release uses by default the *additive* kernel of
:func:`dpkme.kernels.additive.table_kernel` on the same embedding -- a convex combination of Gaussian
terms on one column, on pairs of columns and on the whole row, at scales fixed by the schema alone --
which also has :math:`0 < k \le 1 = k(x, x)` and unit-norm random features, and whose one-column terms
resolve the 1- and 2-way marginals. Everything proved and tested for bounded translation-invariant kernels
applies unchanged to the embedded rows: the unit-norm random features and the :math:`2/N` (replace-one)
sensitivity of Algorithm 2, Algorithm 1's projected embedding, the charges, the audits and the two-sample
tests. The encoder validates each row, clips numeric values to the declared bounds and maps missing
values as declared -- a map applied to each row on its own, so neighbouring tables stay neighbouring and
the guarantee holds for the original rows (the owner sees the counts with
:meth:`~dpkme.schema.TableSchema.encode_report`; they never enter a release).

:func:`release_table`
    Encodes, releases (Algorithm 2 with a solver restricted to the declared domain, or Algorithm 1 with
    points drawn uniformly from it) and returns a :class:`TableRelease`.
:class:`TableRelease`
    The release in the table's own terms: :meth:`~TableRelease.table` (weighted rows with the original
    column names and types), :meth:`~TableRelease.sample` (unweighted rows), :meth:`~TableRelease.metadata`,
    :meth:`~TableRelease.to_csv`, :attr:`~TableRelease.charge`.
:func:`default_n_points`
    The public rule for the number of atoms :math:`M` (it grows with :math:`N` and :math:`\varepsilon`).
:func:`two_sample_on_table`
    The private two-sample tests of :mod:`dpkme.two_sample` on two tables, through the same embedding.

Examples
--------
>>> import pandas as pd
>>> from dpkme.schema import ColumnSpec, TableSchema
>>> from dpkme.release.tabular import release_table
>>> schema = TableSchema([ColumnSpec("age", "integer", lower=18, upper=90),
...                       ColumnSpec("smoker", "boolean")])
>>> df = pd.DataFrame({"age": [25, 40, 61, 33] * 50, "smoker": [True, False, False, True] * 50})
>>> rel = release_table(df, schema=schema, epsilon=1.0, delta=1e-6, n_points=20, n_features=200)
>>> rel.metadata()["differentially_private"], list(rel.table().columns)
(True, ['age', 'smoker', 'weight'])
>>> rows = rel.sample(500)            # post-processing: no further privacy cost
>>> bool(rows["age"].between(18, 90).all()), len(rows)
(True, 500)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from .._validation import check_in, check_positive_float, check_positive_int, check_random_state
from ..kernels.additive import TABLE_KERNELS, AdditiveKernel
from ..kernels.kernel import GaussianKernel, Kernel
from ..kernels.marginal import DEFAULT_MARGINAL_BINS, DEFAULT_MARGINAL_SHARE, DEFAULT_PAIR_WEIGHT, MarginalFeatures
from ..privacy.calibration import calibrate_gaussian
from ..privacy.sensitivity import check_release_args, feature_mean_sensitivity, kme_sensitivity
from ..privacy.spec import PrivacySpec, resolve, resolve_noise
from .core import InMemoryRows, is_row_sums, n_policy
from .random_features import run_algorithm2
from .result import Release
from .subspace import DEFAULT_TOL, run_algorithm1

if TYPE_CHECKING:
    import pandas as pd

    from ..privacy.accounting import PrivacyCharge
    from ..schema import ColumnSpec, TableSchema
    from ..two_sample.private import TwoSampleResult

_T = TypeVar("_T")

__all__ = ["table_release", "MECHANISMS", "DEFAULT_N_FEATURES", "DEFAULT_SPREAD", "DEFAULT_ADDITIVE_SPREAD", "SPREAD_PER_NOISE",
           "DEFAULT_TABLE_KERNEL", "TABLE_REVIVE", "TABLE_REFIT", "N_FEATURES_RANGE", "default_n_features", "default_n_points", "release_table", "TableRelease", "two_sample_on_table",
           "table_marginals", "default_marginal_share", "marginal_cell_noise", "TABLE_MARGINALS", "MARGINAL_OPTIONS", "MAX_CELL_NOISE"]

MECHANISMS = ("algorithm2", "algorithm1")
#: Random features :math:`J` of a table release by Algorithm 2 (the app's largest setting; kernel values
#: approximated to about :math:`1/\sqrt J \approx 0.02`).
DEFAULT_N_FEATURES = 2000
#: Bounds of :func:`default_n_features` (``(minimum, maximum)``): the minimum is :data:`DEFAULT_N_FEATURES`, the
#: maximum bounds the memory of the features (twice that of the minimum).
N_FEATURES_RANGE = (DEFAULT_N_FEATURES, 4000)
#: Bounds of the default number of atoms: at least enough to carry a few hundred distinct rows after
#: spreading, at most what a release computes in seconds (``(minimum, maximum)`` per mechanism).
N_POINTS_RANGE = {"algorithm2": (100, 2000), "algorithm1": (100, 1000)}
_CATEGORICAL_SAMPLING = ("keep", "smooth")
#: Default ``spread`` of :meth:`TableRelease.sample`, in units of each column's lengthscale (measured; see there).
DEFAULT_SPREAD = 0.1
#: Largest default ``spread`` of :meth:`TableRelease.sample` for a release with an additive kernel (reached
#: at high noise), in units of the finest term on each column (1/20 of the range at
#: :func:`dpkme.kernels.additive.table_kernel`'s defaults); see :attr:`TableRelease.default_spread`.
DEFAULT_ADDITIVE_SPREAD = 1.0
#: Default ``spread`` (additive kernel) per unit of the release's noise norm :math:`\sigma\sqrt J`
#: (:attr:`TableRelease.default_spread`; measured on ``benchmarks/bench_tabular.py``'s four tables).
SPREAD_PER_NOISE = 2.0
#: The default kernel of :func:`release_table`: the additive kernel of
#: :func:`dpkme.kernels.additive.table_kernel` (one-column, pair and whole-row terms at public scales).
DEFAULT_TABLE_KERNEL = "additive"
#: Default ``revive`` of a table release's solver (Algorithm 2, ``"pursuit-joint"``): atoms that the greedy
#: left at weight 0 are re-seeded at copies of weighted atoms moved by a normal draw of this standard
#: deviation in embedded units, projected onto the declared domain, before the refinement
#: (:func:`dpkme.reduced_set.pursuit.revive_zero_weights`; measured, see :func:`release_table`).
TABLE_REVIVE = 0.05
#: Default ``refit`` of a table release's solver (Algorithm 2, ``"pursuit-joint"``): after the refinement the
#: simplex weights are re-fitted over a pool of candidates around the atoms (jittered copies, column crossovers,
#: uniform draws from the declared domain), stopped at the noise level
#: (:func:`dpkme.reduced_set.refit.refit_pool`; measured, see :func:`release_table`).
TABLE_REFIT = {"pool_size": 12000, "max_iter": 1000}


def _noise_sigma(*, n_private: int, epsilon: float, delta: float, mechanism: str, calibration: str,
                 neighbouring: str) -> float:
    if mechanism == "algorithm2":
        sens = feature_mean_sensitivity(n=n_private, norm_bound=1.0, neighbouring=neighbouring)
    else:
        sens = kme_sensitivity(n=n_private, kernel=GaussianKernel(lengthscale=1.0), neighbouring=neighbouring)
    return calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=sens, method=calibration).sigma


def default_n_features(*, n_private: int, epsilon: float, delta: float, calibration: str = "analytic",
                       neighbouring: str = "replace-one", minimum: int | None = None,
                       maximum: int | None = None) -> int:
    r"""A public rule for the number of random features :math:`J` of a table release (Algorithm 2): grows with :math:`N\varepsilon`.

    Two errors meet in the privatised vector :math:`\tilde\mu = \hat\mu_J + \eta \in \mathbb R^J`: the random
    features approximate kernel values to about :math:`1/\sqrt J` (a mean of :math:`J/2` bounded cosines), and
    the noise has norm :math:`\|\eta\| \approx \sigma\sqrt J`. More features help until the first falls to the
    second, :math:`1/\sqrt J = \sigma\sqrt J`, i.e. :math:`J = 1/\sigma`, rounded up to an even number and
    clipped to ``[minimum, maximum]``. :math:`\sigma \propto 1/(N\varepsilon)` is the release's public noise
    level (the :math:`2/N` sensitivity of unit-norm features calibrated at :math:`(\varepsilon, \delta)`), so
    the rule reads nothing but public parameters, and the features stay independent of the data: the
    sensitivity and the privacy charge do not depend on :math:`J`. Examples (:math:`\delta = 10^{-6}`):
    :math:`N = 16\,152` gives about 1900 at :math:`\varepsilon = 1` (the minimum 2000) and 5200 at
    :math:`\varepsilon = 3` (the maximum 4000); tables of a few thousand rows keep 2000 for
    :math:`\varepsilon \le 3`.

    Not :func:`release_table`'s default: on ``benchmarks/bench_tabular.py``'s randhie table (two splits,
    ``benchmarks/results/tabular_freq.md``) :math:`J = 4000` instead of 2000 lowered the marginal errors on one
    split at :math:`\varepsilon = 3` and raised them on the other, and at :math:`\varepsilon = 1` (where the
    rule keeps 2000) it raised them on both; a larger :math:`J` also means fewer atoms
    (:func:`default_n_points`) and an earlier discrepancy stop, so the fit times stayed in the same range
    (7--156 s against 21--142 s at 2000 on a loaded 2-core machine).

    Parameters
    ----------
    n_private : int
        Public size :math:`N` of the table.
    epsilon : float
        :math:`\varepsilon > 0`.
    delta : float
        :math:`\delta \in (0, 1)`.
    calibration : {"analytic", "classic"}, default="analytic"
        Calibration of the noise.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation.
    minimum, maximum : int, optional
        Clipping range (default :data:`N_FEATURES_RANGE`).

    Returns
    -------
    int
        :math:`J` (even).

    Examples
    --------
    >>> default_n_features(n_private=344, epsilon=1.0, delta=1e-6)
    2000
    >>> default_n_features(n_private=16152, epsilon=3.0, delta=1e-6)
    4000
    """
    n_private = check_positive_int(n_private, name="n_private")
    lo = N_FEATURES_RANGE[0] if minimum is None else check_positive_int(minimum, name="minimum")
    hi = N_FEATURES_RANGE[1] if maximum is None else check_positive_int(maximum, name="maximum")
    if hi < lo:
        raise ValueError(f"maximum={hi} is below minimum={lo}; give maximum >= minimum.")
    sigma = _noise_sigma(n_private=n_private, epsilon=epsilon, delta=delta, mechanism="algorithm2",
                         calibration=calibration, neighbouring=neighbouring)
    ratio = 1.0 / sigma
    j = hi if not math.isfinite(ratio) or ratio >= hi else 2 * math.ceil(ratio / 2)
    j = min(max(j, lo), hi)
    return int(j + (j % 2))


def default_n_points(*, n_private: int, epsilon: float, delta: float, mechanism: str = "algorithm2",
                     n_features: int = DEFAULT_N_FEATURES, calibration: str = "analytic",
                     neighbouring: str = "replace-one", minimum: int | None = None,
                     maximum: int | None = None) -> int:
    r"""The public default number of atoms :math:`M` of a table release: it grows with :math:`N` and :math:`\varepsilon`.

    An expansion in :math:`M` atoms approximates an embedding to about :math:`1/\sqrt M` in RKHS norm (the
    Monte-Carlo rate: :math:`M` draws from the data's distribution have
    :math:`\mathbb E\|\hat\mu_M - \mu\|^2 = (\mathbb E\,k(x,x) - \mathbb E\,k(x,x'))/M \le 1/M`), while the
    privatised statistic is only known up to its noise. The rule takes the :math:`M` at which the two are
    equal, since more atoms would resolve details below the noise (and the solver's discrepancy stop,
    :func:`dpkme.reduced_set.refine`, would leave them unused):

    * Algorithm 2: the noise of :math:`\tilde\mu \in \mathbb R^J` has norm :math:`\approx\sigma\sqrt J`, so
      :math:`1/\sqrt M = \sigma\sqrt J` gives :math:`M = \lceil 1/(J\sigma^2)\rceil`;
    * Algorithm 1: the noise lives in the :math:`F \le M` basis coordinates, norm
      :math:`\approx\sigma\sqrt M`, so :math:`1/\sqrt M = \sigma\sqrt M` gives :math:`M = \lceil 1/\sigma\rceil`;

    clipped to ``[minimum, maximum]``. :math:`\sigma \propto 1/(N\varepsilon)` is the public noise level of
    the release (:func:`~dpkme.privacy.calibration.calibrate_gaussian` at the mechanism's sensitivity), so
    :math:`M` grows like :math:`N^2\varepsilon^2/J` (Algorithm 2) or :math:`N\varepsilon` (Algorithm 1) and
    depends on nothing but public parameters. Examples (Algorithm 2, :math:`J = 2000`, :math:`\delta =
    10^{-6}`): :math:`N = 344` gives the minimum 100 at every :math:`\varepsilon \le 3`; :math:`N = 20\,000`
    gives about 300 at :math:`\varepsilon = 0.3` and the maximum 2000 at :math:`\varepsilon = 1`.

    Parameters
    ----------
    n_private : int
        Public size :math:`N` of the table.
    epsilon : float
        :math:`\varepsilon > 0`.
    delta : float
        :math:`\delta \in (0, 1)`.
    mechanism : {"algorithm2", "algorithm1"}, default="algorithm2"
        The release.
    n_features : int, default=DEFAULT_N_FEATURES
        :math:`J` (Algorithm 2 only).
    calibration : {"analytic", "classic"}, default="analytic"
        Calibration of the noise.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation.
    minimum, maximum : int, optional
        Clipping range (default :data:`N_POINTS_RANGE` of the mechanism).

    Returns
    -------
    int
        :math:`M`.

    Examples
    --------
    >>> default_n_points(n_private=344, epsilon=1.0, delta=1e-6)
    100
    >>> default_n_points(n_private=20000, epsilon=0.3, delta=1e-6) < default_n_points(
    ...     n_private=20000, epsilon=1.0, delta=1e-6)
    True
    """
    check_in(mechanism, MECHANISMS, name="mechanism")
    n_private = check_positive_int(n_private, name="n_private")
    n_features = check_positive_int(n_features, name="n_features")
    lo_default, hi_default = N_POINTS_RANGE[mechanism]
    lo = lo_default if minimum is None else check_positive_int(minimum, name="minimum")
    hi = hi_default if maximum is None else check_positive_int(maximum, name="maximum")
    if hi < lo:
        raise ValueError(f"maximum={hi} is below minimum={lo}; give maximum >= minimum.")
    sigma = _noise_sigma(n_private=n_private, epsilon=epsilon, delta=delta, mechanism=mechanism,
                         calibration=calibration, neighbouring=neighbouring)
    ratio = 1.0 / (n_features * sigma**2) if mechanism == "algorithm2" else 1.0 / sigma
    m = hi if not math.isfinite(ratio) or ratio >= hi else math.ceil(ratio)
    return int(min(max(m, lo), hi))


#: Largest noise (standard deviation, as a share of the rows) on one cell of a column's 1-way marginal for which
#: :func:`default_marginal_share` turns the marginal block on.
MAX_CELL_NOISE = 0.02


def default_marginal_share(*, n_private: int, epsilon: float, delta: float, n_columns: int,
                           pair_weight: float | None = None, share: float = DEFAULT_MARGINAL_SHARE,
                           calibration: str = "analytic", neighbouring: str = "replace-one",
                           max_cell_noise: float = MAX_CELL_NOISE) -> float:
    r"""The public share :math:`h` of the marginal block of a table release: ``share`` where its cells are informative, else 0.

    In the joint map (:mod:`dpkme.kernels.marginal`) a column's 1-way cells carry the weight
    :math:`\sqrt{h u_1}` with :math:`u_1 = (1 - \text{pair_weight})/p` for :math:`p` columns, so the released
    proportion of one cell has noise :math:`s_1 = \sigma/\sqrt{h u_1}` (:math:`\sigma \propto 1/(N\varepsilon)`,
    the release's public noise level). The block is used when :math:`s_1 \le` ``max_cell_noise`` (2 % of the rows
    by default: below about two thirds of the average cell of a 32-bin column); otherwise its cells are mostly
    noise and the budget is better left to the kernel block (:math:`h = 0`). Public: it reads :math:`N`,
    :math:`\varepsilon`, :math:`\delta` and the schema's number of columns only.

    Measured (``benchmarks/bench_tabular.py``, 4 splits, dpkme with and without the block): on cars
    (:math:`N = 325`; :math:`s_1` = 0.19 / 0.07 at :math:`\varepsilon` = 1 / 3) the block raised the MMD
    (median 0.120 against 0.076 at :math:`\varepsilon = 1`) and the 2-way TV (0.62 against 0.59); on anes96
    (:math:`N = 756`; :math:`s_1` = 0.09 / 0.035) it changed the 2-way TV by under 0.01 and raised the MMD; on fair
    (:math:`N = 5093`; 0.013 / 0.005) and randhie (:math:`N = 16152`; 0.004 / 0.0015) it lowered the marginal
    errors (``benchmarks/results/tabular.md``).

    Parameters
    ----------
    n_private : int
        Public size :math:`N`.
    epsilon, delta : float
        The release's budget.
    n_columns : int
        :math:`p`, the schema's columns.
    pair_weight : float, optional
        Share of the block given to pairs of columns (default: that of :data:`TABLE_MARGINALS`, 0 when it
        has no pairs).
    share : float, default=DEFAULT_MARGINAL_SHARE
        :math:`h` when the block is used.
    calibration, neighbouring : str
        As the release's.
    max_cell_noise : float, default=MAX_CELL_NOISE
        The threshold on :math:`s_1`.

    Returns
    -------
    float
        ``share`` or 0.0.

    Examples
    --------
    >>> default_marginal_share(n_private=325, epsilon=1.0, delta=1e-6, n_columns=8)
    0.0
    >>> default_marginal_share(n_private=16152, epsilon=1.0, delta=1e-6, n_columns=8)
    0.3
    """
    h = check_positive_float(share, name="share")
    limit = check_positive_float(max_cell_noise, name="max_cell_noise")
    noise = marginal_cell_noise(n_private=n_private, epsilon=epsilon, delta=delta, n_columns=n_columns,
                                pair_weight=pair_weight, share=share, calibration=calibration,
                                neighbouring=neighbouring)
    return h if noise <= limit else 0.0


def marginal_cell_noise(*, n_private: int, epsilon: float, delta: float, n_columns: int,
                        pair_weight: float | None = None, share: float = DEFAULT_MARGINAL_SHARE,
                        calibration: str = "analytic", neighbouring: str = "replace-one") -> float:
    r""":math:`s_1 = \sigma/\sqrt{h(1 - \text{pair_weight})/p}`: the noise on one released 1-way cell proportion.

    See :func:`default_marginal_share`; public.

    Parameters
    ----------
    n_private : int
        Public size :math:`N`.
    epsilon, delta : float
        The release's budget.
    n_columns : int
        :math:`p`, the schema's columns.
    pair_weight : float, optional
        The pairs' share of the block (default: :data:`TABLE_MARGINALS`'s, 0 without pairs).
    share : float, default=DEFAULT_MARGINAL_SHARE
        :math:`h`.
    calibration, neighbouring : str
        As the release's.

    Returns
    -------
    float
        The standard deviation of the noise on one released cell proportion.

    Examples
    --------
    >>> round(marginal_cell_noise(n_private=16152, epsilon=1.0, delta=1e-6, n_columns=8), 4)
    0.0038
    """
    from ..kernels.marginal import _check_share

    n_private = check_positive_int(n_private, name="n_private")
    p = check_positive_int(n_columns, name="n_columns")
    h = _check_share(share)
    if pair_weight is None:
        pair_weight = DEFAULT_PAIR_WEIGHT if p > 1 and TABLE_MARGINALS.get("pairs", "none") != "none" else 0.0
    pw = float(pair_weight)
    if not 0.0 <= pw < 1.0:
        raise ValueError(f"pair_weight must lie in [0, 1), got {pair_weight!r}.")
    sigma = _noise_sigma(n_private=n_private, epsilon=epsilon, delta=delta, mechanism="algorithm2",
                         calibration=calibration, neighbouring=neighbouring)
    return float(sigma / math.sqrt(h * (1.0 - pw) / p))


def _check_schema(schema: TableSchema | dict[str, Any] | str) -> TableSchema:
    from ..schema import TableSchema  # local: the schema module imports pandas

    if isinstance(schema, dict):
        return TableSchema.from_dict(schema)
    if isinstance(schema, str):
        return TableSchema.from_json(schema)
    if not isinstance(schema, TableSchema):
        raise ValueError(f"schema must be a dpkme.schema.TableSchema (or its dict/JSON form), got "
                         f"{type(schema).__name__}; declare one with TableSchema([...]) or suggest_schema(...).")
    return schema


def _check_table_kernel(kernel: str | Kernel, schema: TableSchema) -> tuple[Kernel, str]:
    """The kernel of a table release and its kind (``"product"``, ``"additive"`` or ``"custom"``)."""
    if isinstance(kernel, str):
        check_in(kernel, TABLE_KERNELS, name="kernel")
        return schema.kernel(kind=kernel), kernel
    if not isinstance(kernel, Kernel):
        raise ValueError(f"kernel must be one of {list(TABLE_KERNELS)} or a dpkme Kernel, got {kernel!r:.80}.")
    if isinstance(kernel, AdditiveKernel) and kernel.dim != schema.dim:
        raise ValueError(f"the additive kernel is defined on {kernel.dim} coordinates but the schema embeds rows in "
                         f"{schema.dim}; build it with schema.kernel(kind='additive', ...).")
    if kernel == GaussianKernel(lengthscale=1.0):
        return kernel, "product"
    return kernel, "additive" if kernel == schema.kernel(kind="additive") else "custom"


def release_table(
    df: pd.DataFrame,
    *,
    schema: TableSchema | dict[str, Any] | str,
    epsilon: float | None = None,
    delta: float | None = None,
    mechanism: str = "algorithm2",
    n_points: int | None = None,
    n_features: int = DEFAULT_N_FEATURES,
    solver: str = "pursuit-joint",
    weights: str = "simplex",
    calibration: str | None = None,
    neighbouring: str | None = None,
    n_private: int | None = None,
    random_state: int | np.random.Generator | None = None,
    progress: Callable[[float, str], object] | None = None,
    solver_options: dict[str, Any] | None = None,
    preset: str = "accurate",
    noise: str | None = None,
    kernel: str | Kernel = DEFAULT_TABLE_KERNEL,
    marginal_share: float | Literal["auto"] | None = "auto",
    marginal_options: dict[str, Any] | None = None,
    privacy: PrivacySpec | None = None,
) -> TableRelease:
    r"""Release a mixed table with :math:`(\varepsilon, \delta)`-differential privacy.

    Guarantee
    ---------
    The rows are encoded with the declared ``schema`` (:meth:`~dpkme.schema.TableSchema.encode`: each row
    validated, clipped to the declared bounds and embedded on its own), and the embedded rows are released
    by :func:`~dpkme.release.algorithm2` (default) or :func:`~dpkme.release.algorithm1` with the additive
    kernel of :func:`dpkme.kernels.additive.table_kernel` (default) or the schema's product kernel
    :math:`k(x,y) = \exp(-\|e(x)-e(y)\|^2/2)`, both with :math:`k(x,x) = 1` and :math:`k > 0`: the
    guarantee and the charge are exactly theirs (:func:`~dpkme.release.algorithm2_charge`: sensitivity
    :math:`2/N` replace-one). The schema must be public; a schema with values read from the private rows (``schema.data_dependent``, e.g. from
    :func:`~dpkme.schema.suggest_schema` without public rows) makes the release *not private*: it is
    labelled so (:func:`dpkme.privacy.leaks.mark_not_private`, with a
    :class:`~dpkme.privacy.leaks.PrivacyLeakWarning`).

    * Algorithm 2: the reduced-set solver is restricted to the declared domain (``domain=schema.domain``):
      its candidate pool is drawn uniformly from the domain, L-BFGS-B moves the continuous coordinates
      within their boxes and never the discrete ones, so every atom is a valid row (no clipping afterwards).
      Default solver ``"pursuit-joint"`` with simplex weights (a probability measure over the atoms).
      Before its refinement, atoms that the greedy left at weight 0 are re-seeded at copies of weighted
      atoms moved by a normal draw (:data:`TABLE_REVIVE` embedded units) and projected onto the domain
      (onto levels and categories too), sharing their mass (``solver_options={"revive": None}`` turns this
      off). It is post-processing of the privatised vector only: it sees the solver's atoms, the public
      domain and the release's public solver stream, never the rows. Measured on randhie (one split,
      :math:`\varepsilon = 1`, 1 828 atoms; ``benchmarks/bench_tabular.py``'s metrics): 70 → 480 weighted
      atoms, 2-way TV 0.202 → 0.128, numeric 1-way TV 0.073 → 0.056, MMD 0.034 → 0.026, with about 1.5×
      the solver time. The refinement's iteration cap is unchanged (100): raising it to 300 gave less
      (2-way TV 0.226 → 0.188 on another run) at 3× the iterations.
      After the refinement the simplex weights are re-fitted over a pool of 12 000 candidates around the
      atoms (:data:`TABLE_REFIT`, :func:`dpkme.reduced_set.refit.refit_pool`): the atoms, copies of
      weighted atoms moved by normal draws of 0.01 and 0.02 embedded units (about 1/4 and 1/2 of the
      finest kernel term), copies with one or every column taken from other weighted atoms, all projected
      onto the domain, and uniform draws from it; the convex problem
      :math:`\min_{v \ge 0, \sum v = 1} \|\sum_k v_k\phi(p_k) - \tilde\mu\|_2` is solved by a
      spectral projected gradient until the residual reaches the public noise norm :math:`\sigma\sqrt J`
      (discrepancy principle: it is skipped when the atoms are already there, as on tables of a few
      thousand rows), and the ``n_points`` largest weights are kept. Post-processing again (the solver's
      atoms, :math:`\tilde\mu`, the public domain and the solver's stream). Measured on randhie (one
      split, ``benchmarks/bench_tabular.py``'s metrics), :math:`\varepsilon = 1` / 3: residual 0.030 →
      0.023 / 0.019 → 0.0097 (noise norm 0.023 / 0.0085), MMD 0.024 → 0.014 / 0.023 → 0.013, 2-way TV
      0.149 → 0.134 / 0.131 → 0.110, correlation error 0.088 → 0.038 / 0.062 → 0.022; the numeric 1-way
      TV does not move (about 30 of the :math:`J/2` frequencies fall on each column's own term: the
      marginals are resolved by the random features, not by the fit). Benchmark medians (2 splits,
      ``benchmarks/results/tabular_pool.md``): cars, anes96 and fair unchanged (skipped); randhie at
      :math:`\varepsilon = 1` / 3 MMD 0.022 → 0.013 / 0.021 → 0.011, 2-way TV 0.140 → 0.127 / 0.131 →
      0.109, correlation error 0.078 → 0.032 / 0.062 → 0.020, TSTR 0.46 → 0.45 / 0.38 → 0.42, at about
      1.3× / 2.4× the release time there (1 000 iterations at :math:`\varepsilon = 3`).
      ``solver_options={"refit": None}`` turns it off.
    * The marginal block (Algorithm 2, where :func:`default_marginal_share` turns it on, or
      ``marginal_share=h``): the same Gaussian mechanism privatises the mean of
      :math:`[\sqrt{1-h}\,\phi(x);\ \sqrt h\,\psi(x)]`, where :math:`\psi` are the one-hot features of
      every column's public cells and of pairs of columns' cross-tabulations
      (:class:`~dpkme.kernels.marginal.MarginalFeatures`, :data:`TABLE_MARGINALS`; unit norm, so the
      sensitivity stays :math:`2/N` and the charge is unchanged). The solver fits the kernel block; the pool
      re-fit then fits the weights to both blocks until the kernel features, the columns' cells and the pairs'
      cells are each within their own noise norm, over a pool of which a quarter are rows drawn from the
      product of the released 1-way cells (:meth:`~dpkme.kernels.marginal.MarginalFeatures.sample`: plausible
      rows where uniform draws from the domain are not, e.g. many columns with a declared missing level).
      Post-processing of the one privatised vector. Measured (``benchmarks/results/tabular.md``): on randhie
      (:math:`N = 16\,152`) the numeric 1-way TV fell from 0.054--0.057 to about 0.02 and the 2-way TV from
      0.11--0.13 to 0.04--0.06; on fair it lowered the 2-way TV by about 15 %; on tables of a few hundred
      rows the rule leaves it off (there it raised the MMD).
    * Algorithm 1: ``n_points`` points drawn uniformly from the declared domain, weights projected onto the
      simplex by default.

    Parameters
    ----------
    df : pandas.DataFrame
        The private table (columns named as in the schema; others are ignored or refused by the encoder).
    schema : TableSchema, dict or str
        The declared schema (or its :meth:`~dpkme.schema.TableSchema.to_dict` / JSON form).
    epsilon : float, optional
        :math:`\varepsilon > 0` (required unless ``privacy`` gives it).
    delta : float, optional
        :math:`\delta \in (0, 1)` (required unless ``privacy`` gives it).
    mechanism : {"algorithm2", "algorithm1"}, default="algorithm2"
        The release mechanism.
    n_points : int, optional
        Number of atoms :math:`M`. Default: :func:`default_n_points` (public; grows with :math:`N` and
        :math:`\varepsilon`).
    n_features : int, default=DEFAULT_N_FEATURES
        Random features :math:`J` (Algorithm 2). :func:`default_n_features` is a public rule that grows with
        :math:`N\varepsilon` (measured, not the default).
    solver : str, default="pursuit-joint"
        Reduced-set solver (Algorithm 2; not ``"preimage"``, which cannot honour a domain).
    weights : str, default="simplex"
        Weight constraint: for Algorithm 2 one of :data:`dpkme.reduced_set.JOINT_WEIGHTS` (passed to the
        solver when it takes one), for Algorithm 1 ``"free"``, ``"simplex"`` or ``"l1"``.
    calibration : {"analytic", "classic"}, optional
        Calibration of the Gaussian noise (default ``"analytic"``, or ``privacy.calibration``).
    neighbouring : {"replace-one", "add-remove"}, optional
        Neighbouring relation (default ``"replace-one"``, or ``privacy.relation``).
    n_private : int, optional
        Public size :math:`N` (required under add-remove; must equal the rows under replace-one).
    random_state : None, int or numpy.random.Generator
        ``None`` (default): OS-entropy noise, no seed recorded -- a real release. An int: a replayable,
        labelled *not private* teaching demo (the seed regenerates the noise), exactly as
        :func:`~dpkme.release.algorithm2`.
    progress : callable, optional
        ``progress(fraction, message)``; raise from it to cancel.
    solver_options : dict, optional
        Further solver options (Algorithm 2), e.g. ``{"pool_size": 5000}``.
    preset : {"accurate", "interactive"}, default="accurate"
        Named solver options (Algorithm 2).
    noise : {"numpy", "opendp"}, optional
        Sampler of the Gaussian noise (default ``"numpy"``, or ``"opendp"`` when ``privacy.noise == "opendp"``).
    kernel : {"additive", "product"} or Kernel, default=DEFAULT_TABLE_KERNEL
        The kernel on embedded rows: ``"additive"`` (default, :data:`DEFAULT_TABLE_KERNEL`) the sum of
        one-column, pair and product terms of :func:`dpkme.kernels.additive.table_kernel` with its public
        defaults, ``"product"`` the schema's Gaussian kernel (a product of per-column factors at about one
        declared range per column); or any dpkme kernel with :math:`k(x,x) \le 1` on the embedding (e.g.
        ``schema.kernel(kind="additive", pair_resolution=0.2)``). Every choice has the same sensitivity
        and charge; the release's metadata records the kernel. The additive kernel is the default because
        its one-column terms (a twentieth of the range) resolve the 1- and 2-way marginals that the product
        kernel smooths away: on ``benchmarks/bench_tabular.py``'s four tables at :math:`\varepsilon \ge 1`
        the mean 1-way TV of the numeric columns fell 1.7--4x against the product kernel's atoms (1.5--8x
        against its rows resampled at ``spread=1``; ``benchmarks/results/tabular.md``). The product kernel's
        atoms keep a smaller MMD *measured with the product kernel* on the tables with many rows (randhie:
        0.010 against 0.030--0.034 at :math:`\varepsilon \ge 1`).
    marginal_share : "auto", float or None, default="auto"
        Share :math:`h` of the marginal block (above): ``"auto"`` uses :func:`default_marginal_share`'s public
        rule (0.3 where one 1-way cell's noise is at most 2 % of the rows, else no block) where the block
        applies (Algorithm 2, pursuit-joint with its re-fit, simplex or sub-simplex weights); a number in
        (0, 1) forces that share (ValueError where it cannot apply); 0 or None turns it off. Recorded in
        ``release.params["marginals"]`` with the blocks' noise levels and residuals.
    marginal_options : dict, optional
        Options of :class:`~dpkme.kernels.marginal.MarginalFeatures` (:data:`MARGINAL_OPTIONS`: ``n_bins``,
        ``pairs``, ``pair_bins``, ``pair_weight``, ``max_cells``) over :data:`TABLE_MARGINALS`.
    privacy : PrivacySpec, optional
        The typed alternative to ``epsilon``, ``delta``, ``neighbouring``, ``calibration`` and ``noise``
        (:func:`~dpkme.privacy.spec.resolve`, :func:`~dpkme.privacy.spec.resolve_noise`), exactly as for
        :func:`~dpkme.release.algorithm2`: a loose argument that disagrees is a ValueError naming both;
        ``"seeded"`` needs an int ``random_state`` (a demo labelled not private), ``"os-entropy"`` none.

    Returns
    -------
    TableRelease
    """
    def encoded(schema: TableSchema, reporter: Any) -> tuple[npt.NDArray[np.float64], int]:
        reporter(0.0, "encoding the table with the declared schema", force=True)
        X = schema.encode(df)    # the declared preprocessing: each row validated, clipped and embedded on its own
        return X, int(X.shape[0])

    return table_release(
        encoded, schema=schema, epsilon=epsilon, delta=delta, mechanism=mechanism, n_points=n_points,
        n_features=n_features, solver=solver, weights=weights, calibration=calibration, neighbouring=neighbouring,
        n_private=n_private, random_state=random_state, progress=progress, solver_options=solver_options,
        preset=preset, noise=noise, kernel=kernel, marginal_share=marginal_share, marginal_options=marginal_options,
        privacy=privacy)


def table_release(
    open_rows: Callable[[TableSchema, Any], tuple[Any, int | None]],
    *,
    schema: TableSchema | dict[str, Any] | str,
    epsilon: float | None = None,
    delta: float | None = None,
    mechanism: str = "algorithm2",
    n_points: int | None = None,
    n_features: int = DEFAULT_N_FEATURES,
    solver: str = "pursuit-joint",
    weights: str = "simplex",
    calibration: str | None = None,
    neighbouring: str | None = None,
    n_private: int | None = None,
    random_state: int | np.random.Generator | None = None,
    progress: Callable[[float, str], object] | None = None,
    solver_options: dict[str, Any] | None = None,
    preset: str = "accurate",
    noise: str | None = None,
    kernel: str | Kernel = DEFAULT_TABLE_KERNEL,
    marginal_share: float | Literal["auto"] | None = "auto",
    marginal_options: dict[str, Any] | None = None,
    privacy: PrivacySpec | None = None,
) -> TableRelease:
    r"""The orchestration of a table release, wherever its rows live: :func:`release_table` and :func:`dpkme.distributed.release_table`.

    The public arguments are validated first; then ``open_rows(schema, reporter)`` gives the embedded rows --
    an array (in memory) or a :class:`~dpkme.release.core.RowSums` whose sums encode partitions on a cluster
    -- and their public size where it is known (under replace-one the count is public); the public defaults
    (:func:`default_n_points`, :func:`table_marginals`, :func:`table_solver_options`) follow from it, and the
    release is :func:`~dpkme.release.random_features.run_algorithm2` or
    :func:`~dpkme.release.subspace.run_algorithm1` over those rows. Guarantee and charge: those of
    :func:`release_table`.

    Parameters
    ----------
    open_rows : callable
        ``open_rows(schema, reporter) -> (rows, n_rows)``; ``n_rows`` may be ``None`` when ``n_private`` is
        given.
    schema, epsilon, delta, mechanism, n_points, n_features, solver, weights, calibration, neighbouring
        As :func:`release_table`.
    n_private, random_state, progress, solver_options, preset, noise, kernel, marginal_share
        As :func:`release_table`.
    marginal_options, privacy
        As :func:`release_table`.

    Returns
    -------
    TableRelease
    """
    from ..reduced_set import Progress

    schema = _check_schema(schema)
    check_in(mechanism, MECHANISMS, name="mechanism")
    kernel, kernel_kind = _check_table_kernel(kernel, schema)
    epsilon, delta, neighbouring, calibration = resolve(privacy, epsilon=epsilon, delta=delta,
                                                        neighbouring=neighbouring, calibration=calibration)
    noise = resolve_noise(privacy, noise=noise, random_state=random_state, function="release_table")
    epsilon, delta = check_release_args(kernel, epsilon, delta, calibration=calibration, neighbouring=neighbouring)
    n_policy(n_private, neighbouring, 0.1, noise)      # public: refused before any row is read
    if n_private is not None:                          # the public defaults need a public N: an int, also refused
        check_positive_int(n_private, name="n_private")  # before any row is read (not after encoding them)
    if mechanism == "algorithm1" and solver_options:
        raise ValueError("solver_options apply to mechanism='algorithm2' only.")
    domain = schema.domain
    reporter = Progress(progress)
    rows, n_rows = open_rows(schema, reporter)
    if n_private is not None:
        n_pub = check_positive_int(n_private, name="n_private")
    elif n_rows is None:
        raise ValueError("the table's public size is unknown: declare n_private.")
    else:
        n_pub = int(n_rows)
    if n_points is None:
        n_points = default_n_points(n_private=n_pub, epsilon=epsilon, delta=delta, mechanism=mechanism,
                                    n_features=n_features, calibration=calibration, neighbouring=neighbouring)
        rule = "default_n_points"
    else:
        n_points = check_positive_int(n_points, name="n_points")
        rule = "given"
    marg = table_marginals(schema, n_private=n_pub, epsilon=epsilon, delta=delta, mechanism=mechanism, solver=solver,
                           weights=weights, solver_options=solver_options, marginal_share=marginal_share,
                           marginal_options=marginal_options, calibration=calibration, neighbouring=neighbouring)
    if mechanism == "algorithm2":
        rel = run_algorithm2(
            rows, kernel=kernel, epsilon=epsilon, delta=delta, n_points=n_points, n_features=n_features,
            solver=solver, calibration=calibration, neighbouring=neighbouring, n_private=n_private,
            initial_points=None, q_scale=500.0, q_loc=0.0, random_state=random_state, feature_dtype="float32",
            progress=reporter.sub(0.02, 1.0),
            solver_options=table_solver_options(solver, weights=weights, solver_options=solver_options),
            preset=preset, noise=noise, domain=domain, marginals=marg.get("marginals"),
            marginal_share=marg.get("marginal_share"))
    else:
        rel = run_algorithm1(
            rows if is_row_sums(rows) else InMemoryRows(rows), None, kernel=kernel, epsilon=epsilon, delta=delta,
            n_points=n_points, q_scale=None, q_center=None, points_are_sample=False, calibration=calibration,
            neighbouring=neighbouring, sensitivity="tight", domain=None, clip=False, basis="full", tol=DEFAULT_TOL,
            weights=weights, l1_radius=1.0, n_private=n_private, random_state=random_state, basis_cache=None,
            noise=noise, point_domain=domain)
    del rows
    rel.params["n_points_rule"] = rule
    rel.params["table"] = {"columns": list(schema.names), "embedding_dim": int(schema.dim), "kernel": kernel_kind}
    _mark_if_schema_is_data_dependent(rel, schema)
    reporter.finish("table release ready")
    return TableRelease(release=rel, schema=schema)


#: Options of :class:`~dpkme.kernels.marginal.MarginalFeatures` that ``release_table(marginal_options=...)`` sets.
MARGINAL_OPTIONS = ("n_bins", "pairs", "pair_bins", "pair_weight", "max_cells")
#: Defaults of the marginal block of a table release (see :func:`release_table`).
TABLE_MARGINALS = {"n_bins": DEFAULT_MARGINAL_BINS, "pairs": "all"}


def _marginal_options(options: dict[str, Any] | None) -> dict[str, Any]:
    if options is None:
        return dict(TABLE_MARGINALS)
    if not isinstance(options, dict):
        raise ValueError(f"marginal_options must be a dict of {list(MARGINAL_OPTIONS)}, got {options!r:.80}.")
    unknown = sorted(set(options) - set(MARGINAL_OPTIONS))
    if unknown:
        raise ValueError(f"marginal_options: unknown option(s) {unknown}; use some of {list(MARGINAL_OPTIONS)}.")
    return {**TABLE_MARGINALS, **options}


def table_marginals(schema: TableSchema | dict[str, Any] | str, *, n_private: int, epsilon: float, delta: float,
                    mechanism: str = "algorithm2", solver: str = "pursuit-joint", weights: str = "simplex",
                    solver_options: dict[str, Any] | None = None,
                    marginal_share: float | Literal["auto"] | None = "auto",
                    marginal_options: dict[str, Any] | None = None, calibration: str = "analytic",
                    neighbouring: str = "replace-one") -> dict[str, Any]:
    r"""The marginal block of a table release: the keyword arguments :func:`release_table` gives :func:`~dpkme.release.algorithm2`.

    Public: computed from the schema, :math:`N`, :math:`\varepsilon`, :math:`\delta` and the options only, so a
    caller that holds the rows embedded (the app) runs the same release as :func:`release_table`.

    Parameters
    ----------
    schema : TableSchema
        The declared schema.
    n_private : int
        Public size :math:`N`.
    epsilon, delta : float
        The release's budget.
    mechanism, solver, weights, solver_options, calibration, neighbouring
        As in :func:`release_table` (the block needs Algorithm 2 with a weight re-fit and non-negative weights).
    marginal_share : "auto", float or None, default="auto"
        ``"auto"``: :func:`default_marginal_share` where the block applies, else none; a number in (0, 1):
        that share (a ValueError where the block cannot apply); 0 or None: no block.
    marginal_options : dict, optional
        :class:`~dpkme.kernels.marginal.MarginalFeatures` options (:data:`MARGINAL_OPTIONS`), over
        :data:`TABLE_MARGINALS`.

    Returns
    -------
    dict
        ``{}`` (no block) or ``{"marginals": MarginalFeatures, "marginal_share": h}``.

    Examples
    --------
    >>> from dpkme.schema import ColumnSpec, TableSchema
    >>> schema = TableSchema([ColumnSpec("x", "continuous", lower=0, upper=1),
    ...                       ColumnSpec("c", "categorical", categories=["a", "b"])])
    >>> table_marginals(schema, n_private=200, epsilon=1.0, delta=1e-6)
    {}
    >>> kw = table_marginals(schema, n_private=20000, epsilon=1.0, delta=1e-6)
    >>> kw["marginal_share"], kw["marginals"].n_components
    (0.3, 66)
    """
    schema = _check_schema(schema)
    share = _marginal_share(marginal_share, mechanism=mechanism, solver=solver, weights=weights,
                            solver_options=solver_options)
    opts = _marginal_options(marginal_options)
    if share == "auto":
        pairs = opts.get("pairs", "none")
        pw = opts.get("pair_weight", DEFAULT_PAIR_WEIGHT) if not (isinstance(pairs, str) and pairs == "none") \
            and len(schema) > 1 else 0.0
        share = default_marginal_share(n_private=n_private, epsilon=epsilon, delta=delta, n_columns=len(schema),
                                       pair_weight=pw, calibration=calibration, neighbouring=neighbouring) or None
    if share is None:
        return {}
    return {"marginals": MarginalFeatures(schema, **opts), "marginal_share": share}


def _marginal_share(value: float | str | None, *, mechanism: str, solver: str, weights: str,
                    solver_options: dict[str, Any] | None) -> float | Literal["auto"] | None:
    """The public share of the marginal block: ``"auto"`` -> the default where it applies, else None."""
    from ..reduced_set import get_solver

    applies = (mechanism == "algorithm2" and get_solver(solver).accepts("refit")
               and weights in ("simplex", "sub-simplex")
               and not (solver_options and "refit" in solver_options and solver_options["refit"] is None))
    if isinstance(value, str):
        check_in(value, ("auto",), name="marginal_share")
        return "auto" if applies else None
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0):
        return None
    from ..kernels.marginal import _check_share

    share = _check_share(value)
    if not applies:
        raise ValueError(f"marginal_share={value!r} needs mechanism='algorithm2' with the pursuit-joint solver, simplex "
                         "or sub-simplex weights and its weight re-fit (solver_options without refit=None); use "
                         "marginal_share=0 (or 'auto') otherwise.")
    return share


@dataclass
class TableRelease:
    r"""A private release of a mixed table: the :class:`~dpkme.release.Release` of the embedded rows plus the schema.

    Everything it offers is computed from the released atoms and weights and the public schema, so it
    is post-processing and costs no further privacy.

    Parameters
    ----------
    release : Release
        The release of the embedded rows (points in :math:`\mathbb R^D`, weights).
    schema : TableSchema
        The declared schema the rows were encoded with.
    """

    release: Release
    schema: TableSchema

    # ------------------------------------------------------------ views
    @property
    def points(self) -> npt.NDArray[np.float64]:
        """The released atoms in embedding space, (M, D)."""
        return self.release.points

    @property
    def weights(self) -> npt.NDArray[np.float64]:
        """The released weights, (M,)."""
        return self.release.weights

    @property
    def n_points(self) -> int:
        """Number of atoms :math:`M`."""
        return self.release.n_points

    @property
    def charge(self) -> PrivacyCharge | None:
        """The :class:`~dpkme.privacy.accounting.PrivacyCharge` the mechanism stored on :attr:`release` (equal to its
        ``*_charge`` of the same parameters; ``None`` without privacy noise)."""
        return self.release.charge

    def _weight_name(self) -> str:
        name = "weight"
        while name in self.schema.names:
            name = "_" + name
        return name

    def table(self, *, drop_zero: bool = False) -> pd.DataFrame:
        """The weighted rows in the table's own terms.

        Parameters
        ----------
        drop_zero : bool, default=False
            Leave out atoms whose weight is exactly 0.

        Returns
        -------
        pandas.DataFrame
            The decoded atoms (original column names and types: categories as labels, integers as
            integers, dates as datetimes) and a ``"weight"`` column (``"_weight"`` if the table has a
            column called ``weight``).
        """
        out = self.schema.decode(self.points)
        out[self._weight_name()] = self.weights
        if drop_zero:
            out = out[self.weights != 0].reset_index(drop=True)
        return out

    # ------------------------------------------------------------ resampling
    @property
    def default_spread(self) -> float:
        r"""The default ``spread`` of :meth:`sample`, from the kernel and the release's public noise level.

        With an :class:`~dpkme.kernels.additive.AdditiveKernel` (finest-term units):

        .. math:: s = \min\bigl(s_{\max},\ c\,\nu\bigr), \qquad \nu = \sigma\sqrt J,

        :math:`s_{\max}` = :data:`DEFAULT_ADDITIVE_SPREAD`, :math:`c` = :data:`SPREAD_PER_NOISE`, where
        :math:`\nu` is the norm of the noise added to the released statistic relative to the unit norm of
        every feature vector (Algorithm 2: :math:`\sigma` per coordinate of :math:`J` random features;
        Algorithm 1: :math:`J` = the basis dimension). Like a kernel density estimate's bandwidth, the
        smoothing grows with the uncertainty of what is smoothed: where the noise is of the order of the
        signal (a few hundred rows, :math:`\varepsilon \le 1`) the atoms are spread over the finest
        term's scale; where it is small they are kept, so that columns whose values sit on a few codes
        keep them. :math:`\sigma`, :math:`J` and the kernel are public parameters of the release, so the
        rule never looks at the data (with a marginal block, :math:`\sigma` is the kernel block's noise,
        :math:`\sigma/\sqrt{1-h}`). Measured on ``benchmarks/bench_tabular.py``'s tables (one split,
        :math:`\varepsilon \in \{1, 3\}`, numeric 1-way TV at spread 0 / 0.25 / 0.5 / 1): cars
        (:math:`\nu` = 1.2, 0.42) 0.38 / 0.34 / 0.30 / 0.26 and 0.28 / 0.26 / 0.22 / 0.21, anes96 (0.50,
        0.18) 0.20 / 0.18 / 0.16 / 0.16 and 0.15 / 0.14 / 0.13 / 0.15, fair (0.074, 0.027) 0.14 / 0.15 /
        0.19 / 0.31 and 0.07 / 0.10 / 0.17 / 0.30, randhie (0.023, 0.0085) 0.077 / 0.074 / 0.097 / 0.24
        and 0.10 / 0.085 / 0.10 / 0.24. With the product kernel: :data:`DEFAULT_SPREAD` (lengthscale
        units). A release without noise (:math:`\sigma = 0`) is not spread.

        Returns
        -------
        float
        """
        rel = self.release
        if not isinstance(rel.kernel, AdditiveKernel):
            return DEFAULT_SPREAD
        params = rel.params or {}
        coords = params.get("n_features") if rel.mechanism == "algorithm2" else params.get("basis_dim")
        if not coords:
            return DEFAULT_ADDITIVE_SPREAD
        sigma = float((params.get("marginals") or {}).get("kernel_block_sigma", rel.sigma))  # noise of the kernel block
        nu = sigma * math.sqrt(float(coords))
        return float(min(DEFAULT_ADDITIVE_SPREAD, SPREAD_PER_NOISE * nu))

    def sample(self, n: int, rng: int | np.random.Generator | None = None, *, spread: float | None = None,
               categorical: str = "keep") -> pd.DataFrame:
        r"""Unweighted synthetic rows drawn from the release and spread within the kernel's scale.

        Each row picks an atom with probability proportional to its weight (negative parts clipped,
        :func:`dpkme.reduced_set.resample`) and is then moved within the kernel's own resolution, inside
        the declared domain:

        * continuous and date columns: a normal draw around the atom with standard deviation
          ``spread`` times the column's lengthscale (one unit in embedding space; with an additive
          kernel, the length scale of the finest term on the column, :math:`1/\max_{t \ni j} c_t` units),
          shrunk to half the atom's distance to the nearer declared bound (so the draw stays symmetric
          about the atom and the column's mean is kept; an atom on a bound stays on it) and truncated to
          the bounds;
        * integer columns: the same, then the nearest declared level inside the bounds;
        * columns with declared levels (``values``): a level :math:`v` drawn with probability proportional to
          :math:`\exp(-(v - z)^2/(2\,(s u)^2))` (:math:`z` the atom's value, :math:`s u` the standard
          deviation above, shrunk in the same way near the lowest and highest level): the same smoothing
          restricted to the levels, so no value leaves them;
        * categorical and boolean columns: kept (``categorical="keep"``), or redrawn with the kernel's
          similarity (``"smooth"``): another category :math:`c'` with probability proportional to
          :math:`\kappa_c^{1/s^2}` against 1 for the atom's own (:math:`s` = ``spread``), which is the
          Gaussian kernel's factor at scale :math:`s` on the one-hot block (with an additive kernel,
          :math:`s` in units of the finest term on the column: :math:`\kappa_c^{c_t^2/s^2}`);
        * a missing numeric value stays missing (its present/missing block is kept); a categorical
          column's missing level, when declared, is one of its levels.

        So the resampled table has about as many distinct rows as draws (instead of at most :math:`M`),
        and its distribution is the release smoothed at ``spread`` times the kernel's scale.
        ``spread=0`` returns the atoms themselves. The default is :attr:`default_spread`: with an
        additive kernel (the default of :func:`release_table`) it grows with the release's public noise
        level, :math:`\min(1, 2\sigma\sqrt J)` finest-term units, so a noisy release of a small table is
        smoothed and a precise release of a large one keeps its atoms (where they sit on a few coded
        values, spreading only moves mass off them). With the product kernel, :data:`DEFAULT_SPREAD` = 0.1, measured,
        not derived: the solver places atoms more finely than the kernel's lengthscale, and smoothing by
        a whole lengthscale blurs the marginals. Mean 1-way total variation of the resampled rows to the
        private rows at :math:`\varepsilon = 1` (``benchmarks/results/tabular_domain.md``): 0.058 at
        ``spread=0.1`` against 0.092 without spreading and 0.25 at ``spread=1`` on a generated mixed table
        (lengthscales 0.25); 0.32, 0.47 and 0.34 on the penguins' numeric columns. Where the noise
        dominates (penguins, N = 342, :math:`\varepsilon = 0.3`) a larger ``spread`` (1: 0.34 against
        0.40) does better.

        Privacy: the draws use only the released atoms and weights, the public schema and randomness
        independent of the data, so this is post-processing of the release and costs no privacy.

        Parameters
        ----------
        n : int
            Number of rows.
        rng : None, int or numpy.random.Generator
            Randomness of the draws (public; any value is fine, the release's privacy does not depend on it).
        spread : float, optional
            Scale of the spreading in units of each column's lengthscale (0: none). Default:
            :attr:`default_spread` (public: from the kernel and the release's noise level).
        categorical : {"keep", "smooth"}, default="keep"
            Treatment of categorical columns.

        Returns
        -------
        pandas.DataFrame
            ``n`` rows with the original column names and types, all inside the declared domain.
        """
        from ..reduced_set import resample

        n = check_positive_int(n, name="n")
        if spread is None:
            spread = self.default_spread
        spread = check_positive_float(spread, name="spread", allow_zero=True)
        check_in(categorical, _CATEGORICAL_SAMPLING, name="categorical")
        gen, _ = check_random_state(rng)
        Z = resample((self.points, self.weights), n, gen)
        if spread > 0:
            Z = _spread(self.schema, Z, gen, spread=spread, categorical=categorical,
                        unit=_coordinate_units(self.release.kernel, self.schema.dim))
        return self.schema.decode(Z)

    # ------------------------------------------------------------ export
    def metadata(self) -> dict[str, Any]:
        """JSON-serialisable description: the release's metadata plus the schema.

        A real release (OS-entropy noise) has no seed and says ``"differentially_private": true``; a
        seeded demo carries its seed and says false (:meth:`dpkme.release.Release.metadata`).

        Returns
        -------
        dict
        """
        d = self.release.metadata()
        d["kind"] = "table"
        d["schema"] = self.schema.to_dict()
        d["columns"] = list(self.schema.names)
        return d

    def to_json(self, *, include_points: bool = True) -> str:
        """:meth:`metadata` as JSON text, with the released atoms (embedding space) and weights unless
        ``include_points=False`` (:meth:`dpkme.release.Release.to_json`; the table itself is :meth:`to_csv`).

        Parameters
        ----------
        include_points : bool, default=True
            Add ``points`` and ``weights``.

        Returns
        -------
        str
        """
        d = self.metadata()
        if include_points:
            d["points"] = self.release.points.tolist()
            d["weights"] = self.release.weights.tolist()
        return json.dumps(d, indent=2, allow_nan=True)

    def to_csv(self, *, drop_zero: bool = False) -> str:
        r"""CSV text of :meth:`table`, numbers rounded to each column's declared precision.

        Continuous columns are rounded to the column's declared ``decimals`` or, when none is declared,
        to steps of at most :math:`10^{-4}` of the declared range, i.e.
        :math:`\max(0, \lceil -\log_{10}(10^{-4}(hi - lo)) \rceil)` decimals (about 4 significant digits of
        the range: 3 decimals for bounds 0 to 50, whole numbers from a range of :math:`10^4`; a public rule,
        far below the kernel's resolution, never more digits than a declared precision); a column rounded to
        whole numbers is written as integers, as integer columns are; dates to days (or their ``decimals``
        of a day), categories as their labels, missing values empty. So no value carries float artefacts
        such as ``3.0361948271530123`` or ``39.799999999999997``.

        Parameters
        ----------
        drop_zero : bool, default=False
            Leave out atoms whose weight is exactly 0.

        Returns
        -------
        str
        """
        df = _rounded(self.schema, self.table(drop_zero=drop_zero))
        csv: str = df.to_csv(index=False)
        return csv


def _default_decimals(spec: ColumnSpec) -> int:
    r"""Public precision of a continuous column without declared ``decimals``: steps of at most 1e-4 of its range.

    :math:`d = \max(0, \lceil -\log_{10}(10^{-4}(hi - lo)) \rceil)` decimals, from the declared bounds only
    (about 4 significant digits of the range: 3 decimals for a range of 50, whole numbers from a range of
    :math:`10^4`), far below the kernel's resolution.
    """
    lo, hi = spec.bounds
    return max(0, math.ceil(-math.log10((hi - lo) * 1e-4) - 1e-9))


def _rounded(schema: TableSchema, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with continuous columns rounded to their declared decimals (or :func:`_default_decimals`).

    Columns rounded to whole numbers are written as integers (pandas' nullable ``Int64`` where a value is
    missing); columns with declared levels (``values``) keep them. :meth:`~dpkme.schema.TableSchema.decode`
    already rounds declared decimals, integers and dates. Columns ``df`` lacks are skipped.
    """
    import pandas as pd

    df = df.copy()
    for spec in schema.columns:
        if spec.kind != "continuous" or spec.values is not None or spec.name not in df:
            continue
        decimals = _default_decimals(spec) if spec.decimals is None else int(spec.decimals)
        x = pd.to_numeric(df[spec.name], errors="coerce").astype(np.float64).round(decimals)
        if decimals <= 0 and bool((x.abs() < 2.0 ** 53).where(x.notna(), True).all()):
            x = x.astype("Int64") if x.isna().any() else x.astype(np.int64)
        df[spec.name] = x
    return df


def _coordinate_units(kernel: Kernel, dim: int) -> npt.NDArray[np.float64]:
    """Per embedded coordinate, the kernel's length scale there: the finest term's for an additive kernel."""
    if isinstance(kernel, AdditiveKernel):
        return kernel.coordinate_lengthscales()
    return np.full(dim, float(getattr(kernel, "lengthscale", 1.0)))


def _spread(schema: TableSchema, Z: npt.NDArray[np.float64], gen: np.random.Generator, *, spread: float,
            categorical: str, unit: npt.ArrayLike | None = None) -> npt.NDArray[np.float64]:
    """Spread atoms (rows of Z, embedded) within the kernel's scale inside the domain (see :meth:`TableRelease.sample`).

    ``unit``: the kernel's length scale per coordinate (default 1, the product kernel's).
    """
    from scipy.stats import truncnorm

    unit = np.ones(Z.shape[1]) if unit is None else np.asarray(unit, dtype=np.float64)

    domain = schema.domain
    Z = np.array(domain.project(Z), dtype=np.float64)
    missing_of = {num: miss for miss, num, _ in domain.missing_links}
    for spec in schema.columns:
        if not spec.is_numeric:
            continue
        j = domain.blocks[spec.name].start                # the numeric coordinate comes first in its block
        lo, hi = float(domain.lower[j]), float(domain.upper[j])
        present = np.ones(Z.shape[0], dtype=bool)
        if j in missing_of:                                # a "missing" row keeps its imputation value
            miss = missing_of[j]
            present = ~(Z[:, miss] > Z[:, miss - 1])
        if hi <= lo or not present.any():
            continue
        z = Z[present, j]
        sd = spread * float(unit[j])
        if j in domain.value_levels:                       # declared levels: redraw among them, kernel-weighted
            levels = domain.value_levels[j]                # (the same shrinking near the extreme levels)
            sdl = np.minimum(sd, 0.5 * np.minimum(z - levels.min(), levels.max() - z))
            Z[present, j] = _redraw_level(levels, z, np.maximum(sdl, 1e-12 * sd), gen)
            continue
        # Mean-preserving near the bounds: an atom's standard deviation shrinks to half its distance to the
        # nearer declared bound, so its spread stays (almost) symmetric inside the domain; an atom on a bound
        # (a point mass at 0, say) stays there. A fixed sd truncated at a bound moved mass inwards: the mean
        # of a zero-inflated column doubled.
        sdi = np.minimum(sd, 0.5 * np.minimum(z - lo, hi - z))
        moving = sdi > 0
        if moving.any():
            zm, sm = z[moving], sdi[moving]
            a, b = (lo - zm) / sm, (hi - zm) / sm
            out = z.copy()
            out[moving] = np.clip(truncnorm.rvs(a, b, loc=zm, scale=sm, random_state=gen), lo, hi)
            Z[present, j] = out
    if categorical == "smooth":
        links = {miss - 1 for miss, _, _ in domain.missing_links}   # present/missing blocks stay as they are
        for group, scale in domain.onehot_groups:
            cols = np.arange(group.start, group.stop)
            k = cols.size
            if k < 2 or group.start in links:
                continue
            current = np.argmax(Z[:, cols], axis=1)
            sd = spread * float(unit[group.start])
            other = math.exp(-scale**2 / sd**2)            # kappa ** (1 / spread^2), kappa = exp(-a^2)
            switch = gen.random(int(Z.shape[0])) >= 1.0 / (1.0 + (k - 1) * other)
            if switch.any():
                rows = np.flatnonzero(switch)
                new = (current[rows] + gen.integers(1, k, size=rows.size)) % k   # uniform over the others
                Z[np.ix_(rows, cols)] = 0.0
                Z[rows, cols[new]] = scale
    return np.array(domain.project(Z), dtype=np.float64)  # integers to their nearest level inside the bounds


def _redraw_level(levels: npt.NDArray[np.float64], z: npt.NDArray[np.float64], sd: float | npt.NDArray[np.float64],
                  gen: np.random.Generator) -> npt.NDArray[np.float64]:
    r"""For each atom ``z``, a level drawn with probability proportional to :math:`\exp(-(v - z)^2/(2 sd^2))`."""
    sd = np.broadcast_to(np.asarray(sd, dtype=np.float64), z.shape)[:, None]
    logp = -0.5 * ((levels[None, :] - z[:, None]) / sd) ** 2
    p = np.exp(logp - logp.max(axis=1, keepdims=True))
    c = np.cumsum(p, axis=1)
    u = gen.random(z.size) * c[:, -1]
    idx = np.minimum((c < u[:, None]).sum(axis=1), levels.size - 1)
    drawn: npt.NDArray[np.float64] = levels[idx]
    return drawn


def two_sample_on_table(X: pd.DataFrame, Y: pd.DataFrame, *, schema: TableSchema | dict[str, Any] | str,
                        method: str = "tcmc", **kwargs: Any) -> TwoSampleResult:
    r"""A private two-sample test of :mod:`dpkme.two_sample` on two tables with the same declared schema.

    Both tables are encoded with ``schema`` (each row on its own, as for :func:`release_table`) and the
    test runs on the embedded rows with :func:`dpkme.two_sample.run_test`; its guarantee and charges are
    the test's. The feature map must be public and of the embedding's dimension, e.g.
    ``make_features("rff", dim=schema.dim, kernel=schema.kernel(), n_features=...)`` or with
    ``public_sample=schema.domain.sample(n, rng)``.

    Parameters
    ----------
    X, Y : pandas.DataFrame
        The two private tables.
    schema : TableSchema, dict or str
        The declared schema.
    method : {"tcmc", "nte"}, default="tcmc"
        The test (:func:`dpkme.two_sample.run_test`).
    **kwargs
        Passed to the test (``features``, ``epsilon``, ``delta``, ...).

    Returns
    -------
    TwoSampleResult
    """
    from ..two_sample import run_test

    schema = _check_schema(schema)
    return _mark_if_schema_is_data_dependent(run_test(schema.encode(X), schema.encode(Y), method=method, **kwargs),
                                             schema)


def _mark_if_schema_is_data_dependent(result: _T, schema: TableSchema) -> _T:
    """Label ``result`` not private when the schema's declared values were read from the private rows."""
    from ..privacy.leaks import mark_not_private

    dependent = list(getattr(schema, "data_dependent", ()) or ())
    if dependent:
        mark_not_private(result, f"the schema's declared values of column(s) {dependent} were read from the "
                                 "private rows (declare them, or suggest them from public rows)")
    return result


# ------------------------------------------------------------------------------ the table solver's options
__all__ += ["table_solver_options"]   # appended with the helper (the list above is edited elsewhere)


def table_solver_options(solver: str = "pursuit-joint", *, weights: str = "simplex",
                         solver_options: dict[str, Any] | None = None) -> dict[str, Any]:
    r"""The solver options of a table release by Algorithm 2: :func:`release_table`'s defaults for ``solver``.

    ``solver_options`` (the caller's own) completed with what the solver accepts, each only where not given:
    ``weights`` (the weight constraint), ``revive`` = :data:`TABLE_REVIVE` (zero-weight atoms re-seeded
    before the refinement) and, for probability weights (``"simplex"`` or ``"sub-simplex"``), ``refit`` =
    :data:`TABLE_REFIT` (the weights re-fitted over a pool of candidates after it; a new dict every call).
    Give ``None`` for ``revive`` or ``refit`` to turn it off. These are the options :func:`release_table`
    passes to :func:`~dpkme.release.algorithm2` (with its ``preset``, ``"accurate"`` by default), so a caller
    that embeds the rows itself -- the app, which holds them embedded -- runs the same release with the same
    seed. Every option is post-processing of the privatised vector: none changes the guarantee or the charge.

    Parameters
    ----------
    solver : str, default="pursuit-joint"
        A reduced-set solver (:func:`dpkme.reduced_set.get_solver`); options it does not take are not added.
    weights : str, default="simplex"
        The weight constraint (:data:`dpkme.reduced_set.JOINT_WEIGHTS`).
    solver_options : dict, optional
        The caller's options; they win over the defaults (the dict is not modified).

    Returns
    -------
    dict
        The options, a new dict.

    Examples
    --------
    >>> opts = table_solver_options("pursuit-joint")
    >>> opts["weights"], opts["revive"] == TABLE_REVIVE, opts["refit"] == TABLE_REFIT
    ('simplex', True, True)
    >>> table_solver_options("pursuit-joint", solver_options={"refit": None})["refit"] is None
    True
    """
    from ..reduced_set import get_solver

    spec = get_solver(solver)
    if solver_options is not None and not isinstance(solver_options, dict):
        raise ValueError(f"solver_options must be a dict of solver options or None, got {solver_options!r:.80}.")
    options = dict(solver_options or {})
    if spec.accepts("weights"):
        options.setdefault("weights", weights)
    if spec.accepts("revive"):
        options.setdefault("revive", TABLE_REVIVE)
    if spec.accepts("refit") and weights in ("simplex", "sub-simplex"):
        options.setdefault("refit", dict(TABLE_REFIT))
    return options

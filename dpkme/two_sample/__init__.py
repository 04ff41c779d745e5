r"""Differentially private kernel two-sample tests (Raj, Law, Sejdinovic & Park, ECML-PKDD 2019).

"Are these two private samples from the same distribution?" and "is my released
synthetic data distinguishable from held-out private data?", answered with a
differential-privacy guarantee, on top of the analytic tests of Chwialkowski et
al. (2015): mean-embedding (ME) and smooth-characteristic-function (SCF)
features, a Hotelling-type statistic and a chi-square null.

Modules
-------
:mod:`~dpkme.two_sample.features`
    Public feature maps (ME, SCF, unit-norm RFF) and the public choices of
    locations, frequencies and bandwidths -- never from the data being tested.
:mod:`~dpkme.two_sample.sensitivity`
    Replace-one sensitivities of the released moments, with derivations.
:mod:`~dpkme.two_sample.statistic`
    Moments, symmetric matrix noise, PSD projection, the statistics.
:mod:`~dpkme.two_sample.nulls`
    Chi-square, weighted chi-square and parametric-bootstrap nulls.
:mod:`~dpkme.two_sample.private`
    One call = one test: :func:`tcmc_test` (trusted curator), :func:`nte_test`
    (no trusted entity), :func:`release_test` (synthetic vs held-out),
    :func:`nonprivate_test`, :func:`run_test`.
:mod:`~dpkme.two_sample.lab`
    Bundled cases (SG, GMD, GVD) and type-I/power curves with repetitions and
    progress callbacks.
:mod:`~dpkme.two_sample.audit`
    The paper's perturbed-statistic variant and a counterexample to its
    sensitivity bound -- an exhibit for the privacy audit, never a test to use.

Typical use
-----------
>>> from dpkme.two_sample import make_features, run_test
>>> from dpkme.two_sample.lab import make_case
>>> case = make_case("GMD", 5000, random_state=0)          # private X, Y + a public sample
>>> feats = make_features("scf", public_sample=case.public, n_features=3, random_state=0)
>>> res = run_test(case.X, case.Y, method="tcmc", features=feats, epsilon=1.0, delta=1e-5)
>>> res.p_value, res.decision, res.charges                  # doctest: +SKIP

``res.null.samples`` is the null for a histogram, ``res.critical_value()`` the
threshold, ``res.naive_p_value`` the (invalid) chi-square p-value for
contrast, and every element of ``res.charges`` goes into a
:class:`~dpkme.privacy.accounting.BudgetLedger`.

Which variant
-------------
* Paired data with a trusted curator: ``"tcmc"`` (declare ``unit="row"`` when
  X and Y are different people -- half the mean sensitivity).
* Two parties that do not share data, or samples of different sizes:
  ``"nte"`` (each holder adds its own noise; parallel composition).
* Synthetic data vs held-out private data: :func:`release_test`.
* Features: SCF and unit-norm RFF features are far more robust to the noise
  than ME features in high dimension (see the benchmark): ME kernel values
  concentrate (every point is at about the same distance from a location),
  so their variance is tiny compared with their sensitivity bound, while
  sines and cosines of projections spread over their whole range. RFF
  features make the statistic a whitened MMD with bounds that do not grow
  with J; that is this package's "dpMMD-style" option. A separate
  permutation-based dpMMD is not provided: a permutation null needs the
  permuted statistics, which are functions of the private data and would
  each need privatising.
"""

from .features import (
    FEATURE_KINDS,
    FeatureMap,
    MEFeatures,
    RFFFeatures,
    SCFFeatures,
    choose_locations,
    features_from_dict,
    make_features,
    public_lengthscale,
)
from .nulls import NULL_KINDS, NullDistribution
from .private import (
    CALIBRATIONS,
    DEFAULT_MEAN_FRACTION,
    DEFAULT_REGULARIZATION,
    METHODS,
    MomentCalibration,
    calibrate_moments,
    nonprivate_test,
    nte_test,
    release_test,
    run_test,
    tcmc_test,
)
from .result import TwoSampleResult

__all__ = [
    "FEATURE_KINDS",
    "FeatureMap",
    "MEFeatures",
    "SCFFeatures",
    "RFFFeatures",
    "choose_locations",
    "public_lengthscale",
    "make_features",
    "features_from_dict",
    "NULL_KINDS",
    "NullDistribution",
    "CALIBRATIONS",
    "DEFAULT_MEAN_FRACTION",
    "DEFAULT_REGULARIZATION",
    "METHODS",
    "MomentCalibration",
    "calibrate_moments",
    "tcmc_test",
    "nte_test",
    "release_test",
    "nonprivate_test",
    "run_test",
    "TwoSampleResult",
]

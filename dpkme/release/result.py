"""The released object: weighted synthetic points plus everything needed to interpret and replay them."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import check_array, check_weights
from .._version import __version__
from ..kernels.kernel import Kernel, kernel_from_dict
from ..privacy.accounting import PrivacyCharge
from ..privacy.result import charge_record

__all__ = ["Release"]


#: Keys of ``Release.params`` that hold run times: kept for the owner, never exported by :meth:`Release.metadata`.
TIMING_PARAMS = frozenset({"solver_seconds", "seconds_at_M"})

@dataclass
class Release:
    r"""A differentially private KME release :math:`\sum_m w_m k(z_m, \cdot)`.

    Made by the release functions (:func:`~dpkme.release.algorithm1`,
    :func:`~dpkme.release.algorithm2`, :func:`~dpkme.release.exponential.exponential_mechanism`,
    ...) or read back with :meth:`from_json`. ``points`` and ``weights`` are
    validated on construction (finite, matching lengths); a third party uses
    them through eq. (4) of Balog et al. (2018),
    :math:`\mathbb E[h(X)] \approx \sum_m w_m h(z_m)` (:meth:`expectation`).

    Parameters
    ----------
    points : ndarray (M, D)
        Synthetic points :math:`z_m` (public: chosen without the private data, or
        computed from the privatised statistic only).
    weights : ndarray (M,)
        Released weights :math:`w_m` (may be negative unless constrained).
    mechanism : str
        E.g. ``"algorithm1"``, ``"algorithm2"``, ``"exponential"``, ``"uniform-baseline"``.
    epsilon, delta : float
        Privacy parameters the release satisfies (``inf``/``0`` for non-private
        reference outputs such as the noise-free projection).
    sigma : float
        Standard deviation of the Gaussian noise per coordinate (0 if none).
    sensitivity : float
        L2 sensitivity the noise was calibrated to (the score sensitivity
        :math:`\Delta_u` for the exponential mechanism).
    neighbouring : str
        ``"replace-one"`` or ``"add-remove"``.
    calibration : str
        ``"analytic"`` (Balle & Wang 2018) or ``"classic"``, ``"exponential"``,
        or ``"none"``.
    kernel : Kernel
        The kernel whose RKHS the embedding lives in.
    seed : int or None
        Seed of the noise (and of any other randomness), for replay. ``None`` for
        real releases with OS-entropy noise (never recorded, by design).
    n_private : int
        Public size N used for normalisation and calibration.
    seconds : float, default 0.0
        Wall-clock time of the release, in seconds.
    noise_source : str, default "seeded"
        ``"seeded"`` (reproducible, for teaching: whoever knows the seed can
        remove the noise), ``"os-entropy"`` (a real release), ``"opendp"``
        (OpenDP's sampler) or ``"generator"`` (a caller's Generator).
    params : dict, default {}
        Mechanism-specific parameters (M, J, solver, basis, ...); a release
        stamped by :func:`~dpkme.privacy.leaks.mark_not_private` carries
        ``params["private"] = False`` and the reasons.
    version : str, default the installed dpkme version
        Version of dpkme that made the release (exported by :meth:`metadata`).
    charge : PrivacyCharge or None, default None
        The privacy charge the release satisfies, set by the mechanism where it drew the noise (equal to
        what its companion in :mod:`dpkme.release.charges` computes from the public parameters); ``None``
        for an output without privacy noise (e.g. the uniform baseline). Exported by :meth:`metadata` (its
        public record, :func:`~dpkme.privacy.result.charge_record`) and read back by :meth:`from_json`.

    Attributes
    ----------
    n_points, dim : int
        :math:`M` and :math:`D` (derived from ``points``).
    weight_l1 : float
        :math:`\sum_m |w_m|` (derived).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release import Release
    >>> rel = Release(points=np.array([[0.0], [1.0]]), weights=np.array([0.5, 0.5]), mechanism="uniform-baseline",
    ...               epsilon=float("inf"), delta=0.0, sigma=0.0, sensitivity=0.0, neighbouring="replace-one",
    ...               calibration="none", kernel=GaussianKernel(lengthscale=1.0), seed=None, n_private=100)
    >>> rel.expectation(lambda Z: Z[:, 0])             # estimate of E[X] by eq. (4)
    0.5
    >>> rel.metadata()["differentially_private"]       # a reference output, not a private release
    False
    """

    points: np.ndarray
    weights: np.ndarray
    mechanism: str
    epsilon: float
    delta: float
    sigma: float
    sensitivity: float
    neighbouring: str
    calibration: str
    kernel: Kernel
    seed: int | None
    n_private: int
    seconds: float = 0.0
    noise_source: str = "seeded"
    params: dict[str, Any] = field(default_factory=dict)
    version: str = __version__
    charge: PrivacyCharge | None = None

    def __post_init__(self) -> None:
        self.points = check_array(self.points, name="points")
        self.weights = check_weights(self.weights, n=self.points.shape[0])
        if self.charge is not None and not isinstance(self.charge, PrivacyCharge):
            raise ValueError(f"charge must be a PrivacyCharge or None, got {type(self.charge).__name__}.")

    # ------------------------------------------------------------ properties
    @property
    def n_points(self) -> int:
        return int(self.points.shape[0])

    @property
    def dim(self) -> int:
        return int(self.points.shape[1])

    @property
    def weight_l1(self) -> float:
        """:math:`\\sum_m |w_m|` (Theorem 11 / eq. (5) bound this by a constant)."""
        return float(np.abs(self.weights).sum())

    # ------------------------------------------------------------ third-party use
    def expectation(self, h: Callable[[npt.NDArray[np.float64]], npt.ArrayLike]) -> float:
        """Estimate :math:`\\mathbb E[h(X)] \\approx \\sum_m w_m h(z_m)` (eq. (4)).

        ``h`` maps an ``(M, D)`` array to ``M`` values.
        """
        vals = np.asarray(h(self.points), dtype=np.float64).reshape(-1)
        if vals.shape[0] != self.n_points:
            raise ValueError(f"h returned {vals.shape[0]} values for {self.n_points} points.")
        return float(vals @ self.weights)

    def evaluate(self, Y: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The released function :math:`y \\mapsto \\sum_m w_m k(z_m, y)` at rows of ``Y``."""
        Y = check_array(Y, name="Y", n_features=self.dim)
        values: npt.NDArray[np.float64] = self.kernel.cross(Y, self.points) @ self.weights
        return values

    # ------------------------------------------------------------ export
    def metadata(self) -> dict[str, Any]:
        """JSON-serialisable parameters (everything except points and weights).

        A seeded release carries its seed and a warning that the seed removes
        the privacy protection, and says ``"differentially_private": false``;
        an OS-entropy (or OpenDP) release has no seed to carry. The label comes
        from :func:`dpkme.privacy.leaks.privacy_claim`; ``"charge"`` is the record of :attr:`charge`
        (``None`` without privacy noise).
        """
        from ..privacy.leaks import privacy_claim

        d = {
            "library": "dpkme",
            "version": self.version,
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "sigma": self.sigma,
            "sensitivity": self.sensitivity,
            "neighbouring": self.neighbouring,
            "calibration": self.calibration,
            "kernel": self.kernel.to_dict(),
            **privacy_claim(self),
            "seed": self.seed,
            "noise_source": self.noise_source,
            **({"seed_warning": "seeded noise (teaching/demo): anyone who knows this seed can regenerate and "
                                "remove the noise, so this release is not private once the seed is shared"}
               if self.noise_source == "seeded" and self.seed is not None else {}),
            "n_private": self.n_private,
            "n_points": self.n_points,
            "dim": self.dim,
            "weight_l1": self.weight_l1,
            # no run times: they are the owner's (``self.seconds``); a published time is a side channel, since
            # code paths (e.g. the exact spectral sums in 1-D/2-D, the distance formula chosen by magnitude)
            # depend on the private rows
            "params": _jsonable({k: v for k, v in self.params.items() if k not in TIMING_PARAMS}),
            "charge": charge_record(self.charge),
        }
        return d

    def to_json(self, *, include_points: bool = True) -> str:
        """The :meth:`metadata` as JSON text, with the points and weights unless ``include_points=False``."""
        d = self.metadata()
        if include_points:
            d["points"] = self.points.tolist()
            d["weights"] = self.weights.tolist()
        return json.dumps(d, indent=2, allow_nan=True)

    def to_csv(self, columns: list[str] | None = None) -> str:
        """CSV text with one row per synthetic point: its coordinates and weight."""
        cols = columns if columns is not None else [f"x{i}" for i in range(self.dim)]
        if len(cols) != self.dim:
            raise ValueError(f"{len(cols)} column names given for {self.dim} dimensions.")
        buf = io.StringIO()
        buf.write(",".join([*map(_csv_name, cols), "weight"]) + "\n")
        np.savetxt(buf, np.column_stack([self.points, self.weights]), delimiter=",", fmt="%.17g")
        return buf.getvalue()

    @classmethod
    def from_json(cls, text: str) -> Release:
        """Inverse of :meth:`to_json` (with points). Every malformed input raises ValueError.

        The charge is read back from its record, with the same cost under a new id (the file holds no ledger
        id); a file without one (written before releases carried their charge) gives ``charge=None``:
        recompute it with the companion function of :mod:`dpkme.release.charges` from the recorded parameters.
        """
        if not isinstance(text, (str, bytes, bytearray)):
            raise ValueError(f"from_json needs JSON text, got {type(text).__name__}.")
        try:
            d = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"not valid JSON: {exc}.") from None
        if not isinstance(d, dict):
            raise ValueError(f"a release JSON is an object, got {type(d).__name__}.")
        if "points" not in d:
            raise ValueError("this JSON has no points/weights (it was exported with include_points=False).")
        required = ("weights", "mechanism", "epsilon", "delta", "sigma", "sensitivity", "neighbouring",
                    "calibration", "kernel", "seed", "n_private")
        missing = [k for k in required if k not in d]
        if missing:
            raise ValueError(f"this JSON is not a dpkme release: missing field(s) {missing}.")
        if not isinstance(d["kernel"], dict):
            raise ValueError(f"kernel must be a JSON object, got {_short_json(d['kernel'])}.")
        nums = {}
        for key in ("epsilon", "delta", "sigma", "sensitivity"):
            v = d[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) or v < 0:
                raise ValueError(f"{key} must be a number >= 0, got {_short_json(v)}.")
            nums[key] = float(v)
        if nums["delta"] >= 1 or math.isinf(nums["sigma"]) or math.isinf(nums["sensitivity"]):
            raise ValueError(f"delta must be < 1 and sigma, sensitivity finite; got {nums}.")
        n_private = d["n_private"]
        if isinstance(n_private, bool) or not isinstance(n_private, int) or n_private < 0:
            raise ValueError(f"n_private must be an int >= 0, got {_short_json(n_private)}.")
        seed = d["seed"]
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed must be an int or null, got {_short_json(seed)}.")
        params = d.get("params", {})
        if not isinstance(params, dict):
            raise ValueError(f"params must be a JSON object, got {_short_json(params)}.")
        charge = d.get("charge")
        if charge is not None:
            charge = PrivacyCharge.from_record(charge)
        seconds = d.get("seconds", 0.0)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise ValueError(f"seconds must be a number, got {_short_json(seconds)}.")
        return cls(
            points=check_array(d["points"], name="points"),
            weights=check_array(d["weights"], name="weights", ndim=1),
            mechanism=str(d["mechanism"]),
            kernel=kernel_from_dict(d["kernel"]),
            seed=seed,
            n_private=n_private,
            neighbouring=str(d["neighbouring"]),
            calibration=str(d["calibration"]),
            seconds=float(seconds),
            noise_source=str(d.get("noise_source", "seeded")),
            params=params,
            version=str(d.get("version", __version__)),
            charge=charge,
            **nums,
        )


def _short_json(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _csv_name(name: str) -> str:
    name = str(name)
    return '"' + name.replace('"', '""') + '"' if any(c in name for c in ',"\n') else name


def _jsonable(obj: object) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return obj
    return obj

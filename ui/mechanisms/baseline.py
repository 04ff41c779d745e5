"""The uniform baseline: the first M publishable rows with equal weights (reads no private data)."""

from __future__ import annotations

from dpkme.release import Release
from dpkme.release.subspace import uniform_baseline

from .spec import MechanismSpec, RunContext, n_points_control, needs_public


def _baseline_controls(ds):
    return {"n_points": n_points_control(ds.n_public, help="The first M rows of the publishable subset.")}


def _baseline_run(ctx: RunContext, p: dict) -> Release:
    ctx.progress(0.5, "weighting the public points uniformly")
    return uniform_baseline(ctx.ds.public[: p["n_points"]], kernel=ctx.kernel)


BASELINE = MechanismSpec(
    key="baseline",
    label="Uniform baseline · no privacy cost",
    summary="Publish the first M public rows with equal weights 1/M. Reads no private data, spends no budget.",
    explain=r"""The paper's baseline (Appendix B.3): $\hat\mu_{\rm baseline} = \frac1M\sum_{m=1}^M k(z_m,\cdot)$
with $z_m$ the publishable rows. It is a consistent estimator of the population KME (Proposition 6) but
uses only $M \ll N$ rows. Algorithm 1 re-weights the *same* points using the private data.""",
    spends_budget=False, requires=needs_public, controls=_baseline_controls, run=_baseline_run,
    charge=lambda ctx, p: None, tags=("baseline",),
)

SPECS = (BASELINE,)

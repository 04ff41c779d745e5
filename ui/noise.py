"""Where the noise of a release comes from, and the one guard every private page calls.

Real releases are the default everywhere: fresh noise from OS entropy (or OpenDP's vetted
sampler), with nothing recorded that could regenerate it. Seeded noise is a **replay mode for
teaching**: visibly marked, and a release made that way is labelled "replayable demo, not
private" in the app and in its downloads (anyone who knows the seed can subtract the noise).

Seeds are never shared: :func:`claim_seed` hands out each seed at most once per session (across
all pages), so no two releases of a session ever draw from the same noise stream, even in
replay mode; a test's null simulation draws from its own stream (:func:`null_seed`).

:func:`privacy_problems` is the single guard for settings that make a private computation not
private (a lengthscale read off the private rows, seeded noise); the Release, Two-sample,
Clustering and Curves pages all call it.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from . import state as S

REAL = "os-entropy"
OPENDP = "opendp"
REPLAY = "seeded"

LABELS = {
    REAL: "Real release — fresh noise from OS entropy (nothing recorded can regenerate it)",
    OPENDP: "Real release — OpenDP's vetted Gaussian sampler (exact sampling; slower)",
    REPLAY: "Replayable demo (teaching) — seeded noise, NOT private",
}
SHORT = {REAL: "OS entropy (real release)", OPENDP: "OpenDP sampler (real release)",
         REPLAY: "seeded replay (demo, not private)"}

#: Why a seeded result is not private (shown in the UI and stamped into its metadata).
REPLAY_PROBLEM = ("the noise is seeded (replayable demo): anyone who knows the seed can regenerate the noise and "
                  "subtract it, so this is a replayable demo, not a private release")
REPLAY_WARNING = ("**Replay mode (teaching): not private.** The noise comes from the seed below, which is shown and "
                  "exported so the release can be replayed. Anyone who knows it can remove the noise. Results made "
                  "this way are labelled *replayable demo, not private* and are not charged to the ledger as private "
                  "releases. Switch back to a real release before publishing anything.")
LENGTHSCALE_PROBLEM = "the kernel lengthscale was computed from the private rows (median heuristic)"

#: Where the default (numpy) sampler falls short of the proofs.
FLOAT_CAVEAT = ("Noise from numpy's floating-point sampler: the guarantee assumes idealised real arithmetic; "
                "floating-point samplers can in principle leak through their low-order bits (Mironov 2012).")

#: Session key: ``{seed: what used it}`` for every seed handed out in this session.
USED_SEEDS = "_used_seeds"


def is_real(source: str) -> bool:
    """True for noise sources nobody can regenerate (OS entropy, OpenDP)."""
    return source in (REAL, OPENDP)


def used_seeds() -> dict[int, str]:
    return st.session_state.setdefault(USED_SEEDS, {})


def next_free_seed(seed: int) -> int:
    """The smallest seed ≥ ``seed`` not yet used in this session."""
    used = used_seeds()
    s = max(int(seed), 0)
    while s in used:
        s += 1
    return s


def claim_seed(seed: int, what: str) -> int:
    """Hand out the smallest unused seed ≥ ``seed`` and record it as used by ``what``.

    Every seeded computation of the session goes through here, so two releases never share a noise
    stream: asking twice for seed 0 gives 0, then 1.
    """
    s = next_free_seed(seed)
    used_seeds()[s] = str(what)
    return s


def null_seed(noise_seed: int | None) -> int | None:
    """An independent seed for a test's null simulation (a child of the noise seed's SeedSequence).

    ``None`` (real releases): ``None``, i.e. fresh OS entropy for the null as well.
    """
    if noise_seed is None:
        return None
    child = np.random.SeedSequence(int(noise_seed), spawn_key=(1,))
    return int(child.generate_state(1, dtype=np.uint64)[0] % (2**63))


def privacy_problems(*, noise_source: str | None = None, kernel: bool = True, dataset=None) -> list[str]:
    """Reasons why a computation with the current settings would NOT be differentially private.

    Parameters
    ----------
    noise_source : str, optional
        The noise source the computation will use (seeded replay is not private).
    kernel : bool
        Whether the computation uses the session's kernel lengthscale (a lengthscale computed from the
        private rows makes the feature map or the kernel itself a function of the private data).
    dataset : Dataset, optional
        The data it reads (default: the current dataset). A table whose declared schema has values read from
        the private rows (``schema.data_dependent``) makes every computation on its embedded rows not private.
    """
    out = []
    if kernel and st.session_state.get(S.LENGTHSCALE_SOURCE) == "private-data":
        out.append(LENGTHSCALE_PROBLEM)
    if noise_source is not None and not is_real(noise_source):
        out.append(REPLAY_PROBLEM)
    out += schema_problems(S.dataset() if dataset is None else dataset)
    return out


def schema_problems(ds) -> list[str]:
    """Why a computation on ``ds`` is not private because of its schema (declared values read off private rows)."""
    dependent = list(getattr(getattr(ds, "schema", None), "data_dependent", ()) or ())
    scaled = list(getattr(getattr(ds, "scaling", None), "data_dependent", ()) or ())   # suggest_scaling(private_rows=)
    out = [f"the declared scaling of column(s) {scaled} was read from the private rows (declare it from public "
           "knowledge or suggest it from a publishable subset)"] if scaled else []
    if not dependent:
        return out
    return [*out, f"the schema's declared values of column(s) {dependent} were read from the private rows "
                  "(re-declare them from public knowledge, suggest them from a publishable subset, or discover them "
                  "privately)"]


#: Labels for owner-only simulations (curves): nothing is released, but replay mode still makes them reproducible.
SIMULATION_LABELS = {
    REAL: "Fresh noise for every run (default)",
    REPLAY: "Replay (teaching): reproducible runs from a seed",
}


def run_seed(source: str, seed: int | None, what: str) -> int:
    """The seed of an owner-only simulation (curves): in replay mode the claimed seed, otherwise a fresh one from
    OS entropy that is used internally and never shown or exported."""
    if source == REPLAY:
        return claim_seed(0 if seed is None else int(seed), what)
    return int(np.random.SeedSequence().entropy % (2**63))


def noise_controls(source_key: str, seed_key: str, *, options=(REAL, REPLAY), label: str = "Noise source",
                   what: str = "results", labels: dict | None = None) -> tuple[str, int | None]:
    """Radio for the noise source (a real release by default) and, in replay mode, the seed.

    Returns ``(noise_source, requested_seed or None)``; the seed actually used is
    :func:`claim_seed`'s (the next unused one). Call :func:`advance` after a seeded run.
    """
    ss = st.session_state
    pending = seed_key + "._next"
    if pending in ss:                       # set after the last seeded run; applied before the widget exists
        ss[seed_key] = int(ss.pop(pending))
    options = list(options)
    if ss.get(source_key) not in options:
        ss[source_key] = REAL
    ss.setdefault(seed_key, 0)
    st.radio(label, options, key=source_key, persist_state="session", format_func=(labels or LABELS).get,
             help="Real releases draw fresh noise from OS entropy and record no seed. Replay mode is for "
                  "teaching: the seed is recorded so a run can be repeated exactly, which is why it is not private.")
    source = ss[source_key]
    if source == REPLAY:
        if labels is None:
            st.warning(REPLAY_WARNING, icon=":material/replay:")
        ss[seed_key] = next_free_seed(int(ss.get(seed_key, 0)))
        st.number_input("Seed (replay mode)", min_value=0, max_value=2**53 - 1, step=1, key=seed_key,
                        persist_state="session",
                        help=f"Seeds already used in this session are skipped, so no two {what} share noise.")
        return source, int(ss[seed_key])
    return source, None


def release_options(spec) -> tuple[str, ...]:
    """Noise sources the Release page offers for a mechanism (OpenDP where the library supports it)."""
    if "opendp" in getattr(spec, "tags", ()):
        return (REAL, OPENDP, REPLAY)
    return (REAL, REPLAY)


def advance(seed_key: str, used_seed: int | None) -> None:
    """After a seeded run: the seed widget moves on to the next unused seed."""
    if used_seed is not None:
        st.session_state[seed_key + "._next"] = next_free_seed(int(used_seed) + 1)

r"""Padded draws from the compiled samplers: a few array sizes, so a few compilations.

JAX compiles one sampler per architecture **and** draw size. A mixture draw of :math:`n` rows asks each
of the :math:`k` models for a random number of rows, so unpadded draws compile a new sampler almost
every time (an RBM draw took tens of seconds). :func:`padded_draw` rounds a request of :math:`m` rows
up to :math:`\max(8, 2^{\lceil\log_2 m\rceil})`, draws in chunks of at most :data:`SAMPLE_CHUNK` rows
(each chunk with its own key, :func:`jax.random.fold_in`), and slices: at most
:math:`\log_2(\text{SAMPLE\_CHUNK}) - 2` compiled sizes per architecture, whatever is drawn.
Post-processing of the models only (no data, no privacy cost).
"""

from __future__ import annotations

#: Largest compiled draw; bigger requests are drawn in chunks of this size.
SAMPLE_CHUNK = 4096
#: Smallest compiled draw.
MIN_DRAW = 8


def padded_size(m: int) -> int:
    """The compiled size used for a request of ``m`` rows (``m <= SAMPLE_CHUNK``)."""
    return max(MIN_DRAW, 1 << max(int(m) - 1, 0).bit_length())


def padded_draw(fn, model, params, key, n: int):
    """``fn(model, params, key, size)`` at padded sizes, chunked and sliced to ``n`` rows.

    ``fn`` returns ``(features, labels or None)`` as JAX arrays with ``size`` rows.
    """
    import jax
    import jax.numpy as jnp

    n = int(n)
    if n <= SAMPLE_CHUNK:
        u, lab = fn(model, params, key, padded_size(n))
        return u[:n], (None if lab is None else lab[:n])
    us, labs = [], []
    for i, start in enumerate(range(0, n, SAMPLE_CHUNK)):
        m = min(SAMPLE_CHUNK, n - start)
        u, lab = fn(model, params, jax.random.fold_in(key, i), padded_size(m))
        us.append(u[:m])
        labs.append(None if lab is None else lab[:m])
    return jnp.concatenate(us), (None if labs[0] is None else jnp.concatenate(labs))

"""The tutorial notebook runs top to bottom with this environment's Python (nbclient, kernel "python3")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "tutorial.ipynb"


@pytest.mark.slow
def test_tutorial_notebook_executes_with_the_venv_kernel():
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:                       # run from a clean state, whatever is stored in the file
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    km = KernelManager(kernel_name="python3")
    # jupyter_client maps the kernelspec's "python" to the running interpreter: the venv's, with dpkme's deps.
    assert Path(km.format_kernel_cmd()[0]).resolve() == Path(sys.executable).resolve()
    client = NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()          # no wall-clock assert: pytest-timeout bounds a hung kernel

    text = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    # the flow reached every stage and produced the expected kinds of results
    for needle in ("private N = 4275", "analytic sigma", "Algorithm 1:", "Algorithm 2 (", "probability weights",
                   "MMD(release, held-out)", "PLD:", '"mechanism": "algorithm1"',
                   # exponential mechanism, GP release, two-sample test, DP k-means, the full ledger
                   "databases C(|G|+M-1, M)", "delta = 0.0", "GP release: L2 error on the grid",
                   "exported metadata has no true values: True", "release vs held-out:", "GMD case (trusted curator): reject H0",
                   "DP k-means centres", "whole run eps = 1.000", "'held-out rows':",
                   # a mixed table with a declared schema: released, resampled, compared with the truth (owner-only)
                   "mixed table: 8 columns", "embedding D = 22", "truth (owner-only)", "share of Gentoo",
                   # DPGM: planned, trained, sampled with labels, exported without a seed
                   "DPGM plan:", "DPGM: k = 2 models", "export is DP: True | holds a seed: False"):
        assert needle in text, needle

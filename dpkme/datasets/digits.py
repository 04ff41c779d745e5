r"""The 8×8 handwritten digits (1797 images), bundled compressed for the DP generative models.

``dpkme/datasets/data/digits.csv.gz``: 1797 rows, 64 pixel columns ``pixel_<row>_<col>`` with integer
counts 0–16 (the number of "on" pixels in a 4×4 block of the original 32×32 bitmap) and a ``digit``
column (0–9). Exported once from the copy bundled with scikit-learn 1.9.1 (``sklearn.datasets.load_digits``,
nothing downloaded); values and row order unchanged.

Source: the test set of the UCI Machine Learning Repository's *Optical Recognition of Handwritten
Digits* (E. Alpaydin and C. Kaynak, 1998; https://doi.org/10.24432/C50P49), licensed CC BY 4.0 by UCI.
scikit-learn (BSD 3-Clause) redistributes it. Details in ``dpkme/datasets/data/README.md``.
"""

from __future__ import annotations

import gzip
import io

import numpy as np

from .samples import SAMPLE_DIR

__all__ = ["DIGITS_FILE", "DIGITS_INFO", "load_digits"]

#: File name of the bundled digits in :data:`~dpkme.datasets.SAMPLE_DIR`.
DIGITS_FILE = "digits.csv.gz"

#: Description, source, licence and citation of the digits table.
DIGITS_INFO = {
    "name": "digits",
    "label": "Handwritten digits (8×8)",
    "n_rows": 1797,
    "n_pixels": 64,
    "pixel_range": (0, 16),
    "label_column": "digit",
    "source": ("UCI Machine Learning Repository, Optical Recognition of Handwritten Digits (test set, "
               "E. Alpaydin and C. Kaynak, 1998), as redistributed by scikit-learn 1.9.1 (BSD 3-Clause)."),
    "licence": "CC BY 4.0 (UCI Machine Learning Repository)",
    "citation": ("Alpaydin, E. & Kaynak, C. (1998). Optical Recognition of Handwritten Digits. UCI Machine "
                 "Learning Repository. https://doi.org/10.24432/C50P49."),
}


def load_digits(*, as_frame: bool = False):
    r"""Load the bundled 8×8 digits: pixel counts in :math:`\{0,\dots,16\}` and the digit labels.

    Parameters
    ----------
    as_frame : bool, default=False
        Return one pandas DataFrame (64 ``pixel_<row>_<col>`` columns and ``digit``) instead of arrays.

    Returns
    -------
    pixels : ndarray of shape (1797, 64), float64
        Row-major 8×8 images, values 0–16 (only when ``as_frame`` is False).
    labels : ndarray of shape (1797,), int64
        The digit 0–9 of each image (only when ``as_frame`` is False).
    frame : pandas.DataFrame
        When ``as_frame`` is True, instead of the two arrays.

    Raises
    ------
    ValueError
        If the package file is missing or has been modified (wrong shape or values).

    Examples
    --------
    >>> X, y = load_digits()
    >>> X.shape, y.shape, float(X.min()), float(X.max()), sorted(set(y.tolist())) == list(range(10))
    ((1797, 64), (1797,), 0.0, 16.0, True)
    """
    path = SAMPLE_DIR / DIGITS_FILE
    if not path.is_file():
        raise ValueError(f"the digits file {str(path)!r} is missing; it is package data of dpkme.datasets "
                         "(reinstall dpkme or check out the full repository).")
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    header, _, body = text.partition("\n")
    data = np.loadtxt(io.StringIO(body), delimiter=",", dtype=np.int64)
    if data.shape != (1797, 65) or data[:, :64].min() < 0 or data[:, :64].max() > 16 or not np.isin(
            data[:, 64], np.arange(10)).all():
        raise ValueError(f"the digits file {DIGITS_FILE!r} has been modified (shape {data.shape}); restore it "
                         "from the repository.")
    if as_frame:
        import pandas as pd

        return pd.DataFrame(data, columns=header.split(","))
    return data[:, :64].astype(np.float64), data[:, 64].copy()

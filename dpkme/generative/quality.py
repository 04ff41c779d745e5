r"""How recognisable generated rows are: a classifier trained on **real** labelled rows, scored on generated ones.

One model per class (``partition="labels"`` of :func:`~dpkme.generative.dpgm`) draws rows that carry the class of
the model that drew them. :func:`class_agreement` trains a multinomial logistic regression on real labelled rows
(public rows, or rows held out of the private table) and reports the share of generated rows it assigns to the
class of their model: 1/c for class-less static, near the classifier's own accuracy on real rows for rows as
recognisable as real ones. It is the reverse of TSTR (train on synthetic, test on real).

This is an **evaluation**, not a release: it reads the reference rows and the generated rows exactly, adds no noise
and charges nothing. With held-out rows of the private table as the reference it is the data owner's check
(label it so); the generated rows themselves are post-processing of a DP release.

The classifier
--------------
Features are scaled to [0, 1] by the **declared** bounds (as :func:`~dpkme.generative.encode_records` does), and
:math:`W \in \mathbb R^{(d+1)\times c}` minimises

.. math::
    \frac1n\sum_{i=1}^n -\log\operatorname{softmax}(\tilde x_i^\top W)_{y_i} + \frac{\lambda}{2}\|W_{1:d}\|_F^2,
    \qquad \tilde x_i = (u_i, 1),

by L-BFGS (``scipy.optimize.minimize``; a convex problem, so the fit does not depend on a starting point or a seed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_array, check_positive_float, check_positive_int

__all__ = ["ClassAgreement", "SoftmaxClassifier", "class_agreement", "fit_softmax_classifier"]


@dataclass(frozen=True)
class SoftmaxClassifier:
    r"""A multinomial logistic regression on features scaled by declared bounds (:func:`fit_softmax_classifier`).

    Parameters
    ----------
    weights : ndarray of shape (d + 1, c)
        :math:`W` (the last row is the intercept).
    lower, upper : ndarray of shape (d,)
        Declared bounds of the features.
    """

    weights: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @property
    def n_classes(self) -> int:
        return int(self.weights.shape[1])

    def _design(self, X) -> np.ndarray:
        X = check_array(X, name="X")
        if X.shape[1] != self.lower.shape[0]:
            raise ValueError(f"X has {X.shape[1]} columns; the classifier was trained on {self.lower.shape[0]}.")
        U = np.clip((X - self.lower) / (self.upper - self.lower), 0.0, 1.0)
        return np.concatenate([U, np.ones((U.shape[0], 1))], axis=1)

    def predict(self, X) -> np.ndarray:
        """The most probable class of every row.

        Parameters
        ----------
        X : array (n, d)
            Rows in the declared units.

        Returns
        -------
        ndarray of shape (n,), int
        """
        return np.argmax(self._design(X) @ self.weights, axis=1).astype(np.int64)

    def score(self, X, labels) -> float:
        """Share of the rows whose predicted class is their label.

        Parameters
        ----------
        X : array (n, d)
            Rows in the declared units.
        labels : array (n,) of int
            Their classes.

        Returns
        -------
        float
        """
        y = np.asarray(labels).reshape(-1)
        pred = self.predict(X)
        if y.shape != pred.shape:
            raise ValueError(f"labels must have one entry per row ({pred.shape[0]}), got shape {y.shape}.")
        return float(np.mean(pred == y)) if y.size else float("nan")


def _check_labels(labels, n: int, c: int) -> np.ndarray:
    y = np.asarray(labels).reshape(-1)
    if y.shape != (n,):
        raise ValueError(f"labels must have one entry per row ({n}), got shape {np.asarray(labels).shape}.")
    if y.size and (not np.all(np.equal(np.mod(y, 1), 0)) or y.min() < 0 or y.max() >= c):
        raise ValueError(f"labels must be class indices in range(n_classes={c}); found {y.min()}..{y.max()}.")
    return y.astype(np.int64)


def fit_softmax_classifier(X, labels, *, n_classes: int, bounds, l2: float = 1e-3) -> SoftmaxClassifier:
    r"""Fit a multinomial logistic regression (module docstring) on labelled rows.

    Parameters
    ----------
    X : array (n, d)
        Real labelled rows (public or held out), in the declared units.
    labels : array (n,) of int
        Their classes in ``range(n_classes)``.
    n_classes : int
        Declared number of classes :math:`c \ge 2`.
    bounds : (lower, upper)
        Declared bounds of the columns (numbers or length-d arrays).
    l2 : float, default=1e-3
        :math:`\lambda`, the ridge penalty on the weights (not the intercept).

    Returns
    -------
    SoftmaxClassifier

    Raises
    ------
    ValueError
        On empty or non-finite rows, labels outside ``range(n_classes)``, bad bounds or :math:`\lambda < 0`.

    Examples
    --------
    >>> X = np.array([[0.0, 0.1], [0.2, 0.0], [0.9, 1.0], [1.0, 0.8]])
    >>> clf = fit_softmax_classifier(X, [0, 0, 1, 1], n_classes=2, bounds=(0, 1))
    >>> clf.predict([[0.1, 0.1], [0.9, 0.9]]).tolist(), clf.score(X, [0, 0, 1, 1])
    ([0, 1], 1.0)
    """
    from scipy.optimize import minimize
    from scipy.special import log_softmax

    from .dpgm import _check_bounds

    X = check_array(X, name="X")
    if X.shape[0] == 0:
        raise ValueError("X has no rows: the classifier needs labelled rows.")
    c = check_positive_int(n_classes, name="n_classes", minimum=2)
    y = _check_labels(labels, X.shape[0], c)
    lam = check_positive_float(l2, name="l2", allow_zero=True)
    lo, hi = _check_bounds(bounds, X.shape[1])
    clf = SoftmaxClassifier(weights=np.zeros((X.shape[1] + 1, c)), lower=lo, upper=hi)
    A = clf._design(X)
    n, p = A.shape
    Y = np.eye(c)[y]
    pen = np.ones((p, 1))
    pen[-1] = 0.0                                        # no penalty on the intercept

    def f(w):
        W = w.reshape(p, c)
        ls = log_softmax(A @ W, axis=1)
        val = -np.sum(Y * ls) / n + 0.5 * lam * np.sum(pen * W**2)
        grad = A.T @ (np.exp(ls) - Y) / n + lam * pen * W
        return val, grad.ravel()

    opt = minimize(f, np.zeros(p * c), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return SoftmaxClassifier(weights=opt.x.reshape(p, c), lower=lo, upper=hi)


@dataclass(frozen=True)
class ClassAgreement:
    r"""Result of :func:`class_agreement`.

    Parameters
    ----------
    accuracy : float
        Share of the generated rows the classifier assigns to the class of the model that drew them.
    per_class : ndarray of shape (c,)
        The same share among the generated rows of each class (NaN for a class with no generated row).
    n_generated : int
        Number of generated rows scored.
    reference_accuracy : float or None
        The classifier's accuracy on the real rows given as ``check`` (``None`` without them): the ceiling to
        read ``accuracy`` against.
    chance : float
        :math:`1/c`.
    classifier : SoftmaxClassifier
        The fitted classifier.
    """

    accuracy: float
    per_class: np.ndarray
    n_generated: int
    reference_accuracy: float | None
    chance: float
    classifier: SoftmaxClassifier


def class_agreement(generated, generated_labels, *, reference, reference_labels, n_classes: int, bounds,
                    check=None, check_labels=None, l2: float = 1e-3) -> ClassAgreement:
    r"""Share of generated rows that a classifier trained on real rows assigns to the class of their model.

    An evaluation (module docstring): no noise, no charge. The reference (and ``check``) rows should be public or
    held out of the private table; with private rows it is the data owner's check, not something to publish.

    Parameters
    ----------
    generated : array (m, d)
        Generated rows, in the declared units (e.g. :meth:`~dpkme.generative.DPGMResult.sample_with_labels`).
    generated_labels : array (m,) of int
        The class of the model that drew each row.
    reference : array (n, d)
        Real labelled rows the classifier is trained on.
    reference_labels : array (n,) of int
        Their classes.
    n_classes : int
        Declared number of classes :math:`c \ge 2`.
    bounds : (lower, upper)
        Declared bounds of the columns.
    check : array (n', d), optional
        Other real labelled rows on which the classifier's own accuracy is measured (its ceiling).
    check_labels : array (n',) of int, optional
        Their classes (required with ``check``).
    l2 : float, default=1e-3
        Ridge penalty of the classifier (:func:`fit_softmax_classifier`).

    Returns
    -------
    ClassAgreement

    Raises
    ------
    ValueError
        On mismatched shapes, labels outside ``range(n_classes)``, ``check`` without ``check_labels``, or the
        errors of :func:`fit_softmax_classifier`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> real = np.concatenate([rng.normal(0.25, 0.05, (20, 2)), rng.normal(0.75, 0.05, (20, 2))])
    >>> y = np.repeat([0, 1], 20)
    >>> fake = np.array([[0.3, 0.2], [0.7, 0.8], [0.2, 0.3]])
    >>> r = class_agreement(fake, [0, 1, 1], reference=real, reference_labels=y, n_classes=2, bounds=(0, 1))
    >>> round(r.accuracy, 3), r.per_class.tolist(), r.chance
    (0.667, [1.0, 0.5], 0.5)
    """
    G = check_array(generated, name="generated")
    c = check_positive_int(n_classes, name="n_classes", minimum=2)
    g = _check_labels(generated_labels, G.shape[0], c)
    if (check is None) != (check_labels is None):
        raise ValueError("give check and check_labels together (real rows to measure the classifier's own accuracy).")
    clf = fit_softmax_classifier(reference, reference_labels, n_classes=c, bounds=bounds, l2=l2)
    hit = clf.predict(G) == g if G.shape[0] else np.zeros(0, bool)
    per = np.array([float(np.mean(hit[g == s])) if np.any(g == s) else np.nan for s in range(c)])
    ref = None
    if check is not None:
        Xc = check_array(check, name="check")
        ref = clf.score(Xc, _check_labels(check_labels, Xc.shape[0], c))
    return ClassAgreement(accuracy=float(np.mean(hit)) if hit.size else float("nan"), per_class=per,
                          n_generated=int(G.shape[0]), reference_accuracy=ref, chance=1.0 / c, classifier=clf)

"""How recognisable generated rows are (dpkme.generative.quality): the classifier trained on real rows, the share of
generated rows it gives the class of their model. Numpy and scipy only: no JAX, no training of generative models."""

from __future__ import annotations

import numpy as np
import pytest

from dpkme.generative import class_agreement, fit_softmax_classifier


def _blobs(n=30, seed=0):
    """Three well-separated classes in [0, 10]²."""
    rng = np.random.default_rng(seed)
    centres = np.array([[2.0, 2.0], [8.0, 2.0], [5.0, 8.0]])
    y = np.repeat(np.arange(3), n)
    return np.clip(centres[y] + rng.normal(0, 0.5, (3 * n, 2)), 0, 10), y


def test_rows_like_the_real_ones_agree_and_static_is_near_chance():
    X, y = _blobs()
    Xc, yc = _blobs(seed=1)
    good = class_agreement(Xc, yc, reference=X, reference_labels=y, n_classes=3, bounds=(0, 10), check=Xc,
                           check_labels=yc)
    assert good.accuracy == 1.0 and good.reference_accuracy == 1.0 and good.chance == pytest.approx(1 / 3)
    assert good.per_class.tolist() == [1.0, 1.0, 1.0] and good.n_generated == 90
    # rows drawn by "models" that ignore their class: the agreement is the share that lands in the right region
    static = np.random.default_rng(2).uniform(0, 10, (3000, 2))
    labels = np.random.default_rng(3).integers(0, 3, 3000)
    bad = class_agreement(static, labels, reference=X, reference_labels=y, n_classes=3, bounds=(0, 10))
    assert abs(bad.accuracy - 1 / 3) < 0.05 and bad.reference_accuracy is None     # 3000 draws: sd ≈ 0.009


def test_a_class_without_generated_rows_is_nan_and_the_fit_is_deterministic():
    X, y = _blobs()
    r = class_agreement(X[y < 2], y[y < 2], reference=X, reference_labels=y, n_classes=3, bounds=(0, 10))
    assert np.isnan(r.per_class[2]) and r.per_class[:2].tolist() == [1.0, 1.0]
    a = fit_softmax_classifier(X, y, n_classes=3, bounds=(0, 10))
    b = fit_softmax_classifier(X, y, n_classes=3, bounds=(0, 10))
    assert np.array_equal(a.weights, b.weights)                   # convex, zero start: no seed to choose
    # rows outside the declared bounds are clipped to them, as the generative models' records are
    assert a.predict([[-50.0, -50.0]]).tolist() == a.predict([[0.0, 0.0]]).tolist()


def test_bad_inputs_name_the_value():
    X, y = _blobs()
    with pytest.raises(ValueError, match="range\\(n_classes=3\\)"):
        class_agreement(X, y + 1, reference=X, reference_labels=y, n_classes=3, bounds=(0, 10))
    with pytest.raises(ValueError, match="one entry per row"):
        class_agreement(X, y[:-1], reference=X, reference_labels=y, n_classes=3, bounds=(0, 10))
    with pytest.raises(ValueError, match="check and check_labels"):
        class_agreement(X, y, reference=X, reference_labels=y, n_classes=3, bounds=(0, 10), check=X)
    with pytest.raises(ValueError, match="n_classes"):
        fit_softmax_classifier(X, y, n_classes=1, bounds=(0, 10))
    with pytest.raises(ValueError, match="bounds"):
        fit_softmax_classifier(X, y, n_classes=3, bounds=(10, 0))
    with pytest.raises(ValueError, match="l2"):
        fit_softmax_classifier(X, y, n_classes=3, bounds=(0, 10), l2=-1.0)
    with pytest.raises(ValueError, match="columns"):
        fit_softmax_classifier(X, y, n_classes=3, bounds=(0, 10)).predict(np.zeros((2, 3)))

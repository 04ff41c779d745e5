r"""Declared schemas of mixed tables, and the public embedding that makes them kernel data.

A table with numeric, integer, categorical, boolean and date columns (with missing values) becomes data
for every mechanism of dpkme through a **declared** :class:`TableSchema`: a public, per-row map
:math:`e` from a row :math:`x` to a vector :math:`e(x)\in\mathbb R^D` (the *embedding*). The mixed
kernel is the Gaussian kernel with length scale 1 on embedded rows,

.. math:: k(x, y) = \exp\Bigl(-\tfrac12\,\|e(x) - e(y)\|_2^2\Bigr)
          = \prod_{j} k_j(x_j, y_j),

i.e. :class:`dpkme.GaussianKernel` ``(lengthscale=1.0)`` applied to :meth:`TableSchema.encode`'s output.
So :math:`k(x,x) = 1` and :math:`0 < k \le 1`, the replace-one sensitivity of the kernel mean embedding
stays :math:`\|\hat\mu_D - \hat\mu_{D'}\|_{\mathcal H} = \sqrt{2 - 2k(x, x')}/N \le 2/N`, and the
unit-norm random features, Algorithms 1 and 2, the sensitivity code, audits and two-sample tests apply
to embedded rows unchanged.

The embedding, column by column
-------------------------------
continuous, integer, datetime
    Declared bounds :math:`[lo_j, hi_j]` (a datetime counts in days since 1970-01-01) and a length scale
    :math:`\ell_j` as a *fraction of the declared range*; one coordinate

    .. math:: e_j(x) = \frac{\operatorname{clip}(x_j, lo_j, hi_j) - lo_j}{(hi_j - lo_j)\,\ell_j},
              \qquad k_j(x_j, y_j) = \exp\Bigl(-\frac{(x_j - y_j)^2}{2\ell_j^2(hi_j - lo_j)^2}\Bigr).

continuous or integer with declared levels (``values``)
    The same numeric coordinate (order and distance are kept), restricted to the embedded levels
    :math:`e_j(v_1) < \dots < e_j(v_n)`: the domain holds the coordinate on them (sampled among them, never
    moved by a solver), decoded and resampled values are levels, and a private value between levels is
    snapped to the nearest one (counted as ``rounded``). For survey codes (ages coded 17.5, 22, 27, ...)
    whose values would otherwise spill into the gaps between codes.
categorical, boolean
    A declared list of :math:`c_j` categories (a missing value may be one more level); a one-hot block
    scaled by :math:`a_j = \sqrt{-\ln\kappa_j}`, where :math:`\kappa_j\in(0,1)` is the declared
    *similarity* of two different categories. Since :math:`\|a e_u - a e_v\|^2 = 2a^2` for
    :math:`u\ne v`,

    .. math:: k_j(x_j, y_j) = \begin{cases} 1 & x_j = y_j\\ \kappa_j & x_j \ne y_j\end{cases}

    (an overlap or Hamming-type kernel).
missing values (``missing=``)
    ``"error"`` (the default) refuses them, naming the column and the number of rows; ``"impute"``
    replaces them by the declared ``impute`` value; ``"category"`` makes them a level of their own: for a
    categorical column one more one-hot coordinate, for a numeric column a two-level block
    (present/missing, similarity ``similarity``) next to the numeric coordinate, which then holds the
    declared imputation value (default: the middle of the range).

Everything that is not a declared value is part of the **declared preprocessing**: numbers outside
the bounds are clipped to them, integers are rounded, dates given as text are read with the column's
declared ``date_format`` (ISO 8601 by default; never a format guessed from the column), values that are
not among the declared categories are refused (``missing="error"``) or treated as missing. Every cell is
read on its own (:func:`parse_dates`; category labels through type-tagged keys, so ``True`` and ``1``
stay apart), so the embedding of a row depends on that row and on the schema only: it is a fixed public
map and the sensitivity proofs hold as stated. :meth:`TableSchema.encode_report` tells the data owner how many cells were clipped,
rounded, imputed or unknown; those counts are statistics of the private data and belong to the
owner only -- never put them in a release.

Public default length scales and similarities
---------------------------------------------
A column without a declared ``lengthscale``/``similarity`` gets a default computed from the schema
alone (never from data). With :math:`p` columns and target :math:`s` (``uniform_sq_distance``,
default 1), each column is given an equal share :math:`s/p` of the expected squared embedded
distance between two independent uniform draws :math:`X, Y` from the declared domain:

* continuous and datetime: :math:`E(U - V)^2 = 1/6` for independent uniforms on :math:`[0, 1]`, so
  :math:`\ell_j = \sqrt{p/(6s)}`;
* integer with :math:`n` levels: :math:`E(K - K')^2/(n-1)^2 = (n+1)/(6(n-1))`, so
  :math:`\ell_j = \sqrt{p(n+1)/(6s(n-1))}`; declared levels :math:`v`: :math:`E(V - V')^2 = 2\mathrm{Var}(v)`,
  so :math:`\ell_j = \sqrt{2p\mathrm{Var}(v)/s}/(hi_j - lo_j)`;
* categorical and boolean with :math:`c` levels (the missing level included): two uniform levels
  differ with probability :math:`1 - 1/c`, so :math:`\kappa_j = \exp(-s/(2p(1 - 1/c)))`;
* the present/missing block of a numeric column with ``missing="category"`` is a two-level column:
  :math:`\kappa = \exp(-s/p)`.

Without numeric missing-value blocks, :math:`E\|e(X) - e(Y)\|^2 = s` exactly, and because it is a sum
of :math:`p` independent terms its median is close to :math:`s`: the **median heuristic, computed on
the declared domain instead of on the data**. In words: with the default :math:`s = 1`, two rows
drawn at random from everything the schema allows have a kernel value of about
:math:`e^{-1/2}\approx 0.6`, and every column counts equally. Real rows are more concentrated than
uniform draws, so their kernel values are larger; declare smaller length scales (a fraction of the
range, e.g. ``lengthscale=0.2``) or a smaller ``uniform_sq_distance`` for a finer kernel. Every
default can be overridden per column.

Privacy notes
-------------
A schema must be declared from public knowledge (a data dictionary, physical or legal ranges, a
public sample). :func:`suggest_schema` proposes one from public rows, or -- flagged with a
:class:`~dpkme.privacy.leaks.PrivacyLeakWarning` and recorded field by field in
:attr:`TableSchema.data_dependent_fields` (the columns in :attr:`TableSchema.data_dependent`) -- from the
private rows themselves; :mod:`dpkme.privacy.discovery` releases bounds and category lists privately,
with a charge for the ledger, and :meth:`TableSchema.redeclare` declares them, clearing exactly those
fields. The schema is published with every release, so each of its fields must be public.

The package
-----------
:mod:`dpkme.schema.columns` (:class:`ColumnSpec`, the public default scales, :class:`DataDependence`),
:mod:`dpkme.schema.dates` (declared date formats, :func:`parse_dates`), :mod:`dpkme.schema.domain`
(:class:`EmbeddedDomain`), :mod:`dpkme.schema.table` (:class:`TableSchema`, :class:`EncodeReport`) and
:mod:`dpkme.schema.suggestions` (:func:`suggest_schema`); every public name is imported from :mod:`dpkme.schema`.

Examples
--------
>>> import pandas as pd
>>> schema = TableSchema([
...     ColumnSpec("species", "categorical", categories=["Adelie", "Chinstrap", "Gentoo"]),
...     ColumnSpec("mass_g", "continuous", lower=2000, upper=7000, lengthscale=0.25, decimals=0),
...     ColumnSpec("sex", "categorical", categories=["female", "male"], missing="category"),
... ])
>>> df = pd.DataFrame({"species": ["Adelie", "Gentoo"], "mass_g": [3750.0, 5200.0], "sex": ["male", None]})
>>> Z = schema.encode(df)
>>> Z.shape, schema.dim
((2, 7), 7)
>>> back = schema.decode(Z)
>>> back["species"].tolist(), back["mass_g"].tolist(), back["sex"].isna().tolist()
(['Adelie', 'Gentoo'], [3750.0, 5200.0], [False, True])
>>> TableSchema.from_json(schema.to_json()) == schema
True
"""

from __future__ import annotations

from .columns import (
    DATA_FIELDS,
    KINDS,
    MISSING_POLICIES,
    ColumnSpec,
    DataDependence,
    default_lengthscale,
    default_similarity,
)
from .dates import DEFAULT_DATE_FORMAT, parse_dates
from .domain import EmbeddedDomain
from .suggestions import SchemaSuggestion, suggest_schema
from .table import SCHEMA_FORMAT, SCHEMA_VERSION, EncodeReport, TableSchema

__all__ = [
    "KINDS",
    "MISSING_POLICIES",
    "DATA_FIELDS",
    "DEFAULT_DATE_FORMAT",
    "SCHEMA_FORMAT",
    "SCHEMA_VERSION",
    "ColumnSpec",
    "TableSchema",
    "EmbeddedDomain",
    "EncodeReport",
    "SchemaSuggestion",
    "DataDependence",
    "suggest_schema",
    "parse_dates",
    "default_lengthscale",
    "default_similarity",
]

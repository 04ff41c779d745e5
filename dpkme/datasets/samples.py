"""The bundled sample tables: small public data sets shipped as package data.

The CSV files live in ``dpkme/datasets/data/`` (sources and licences in the
``README.md`` next to them) and are read through :mod:`importlib.resources`, so
they work from a checkout and from an installed wheel alike::

    df, info = load_sample("wine")
    X = numeric_matrix(df, info.numeric_columns)     # dpkme.io.numeric_matrix

The mixed tables (categorical, integer, date columns and missing values: ``penguins``,
``seattle_weather``) come with a declared :class:`~dpkme.schema.TableSchema` in a JSON file next to
the CSV (``info.schema``), loaded by :func:`load_schema`::

    df, info = load_sample("penguins")
    schema = load_schema("penguins")
    Z = schema.encode(df)                            # embedded rows for any mechanism
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..io import load_table

if TYPE_CHECKING:  # importlib.resources.abc is new in Python 3.11
    from importlib.resources.abc import Traversable

__all__ = ["load_sample", "load_schema", "SAMPLES", "SampleInfo", "SAMPLE_DIR"]

#: Folder of the bundled sample tables (``dpkme/datasets/data``, package data), as an
#: :class:`importlib.resources.abc.Traversable` (a :class:`pathlib.Path` for an ordinary install).
SAMPLE_DIR: Traversable = files("dpkme.datasets") / "data"


@dataclass(frozen=True)
class SampleInfo:
    """Description of a bundled sample table (see ``dpkme/datasets/data/README.md``).

    Parameters
    ----------
    name : str
        Registry key.
    label : str
        Human-readable title.
    filename : str
        CSV file in :data:`SAMPLE_DIR`.
    description : str
        What the table holds, in a few sentences.
    source : str
        Original authors / repository.
    licence : str
        Licence of the data (and of the copy it was exported from).
    citation : str
        How to cite the data.
    n_rows, n_columns : int
        Shape of the table (all columns, including the label).
    numeric_columns : tuple of str
        Recommended numeric feature columns for a release of numeric columns only (rows with a
        missing value in them must be dropped explicitly: ``numeric_matrix(..., drop_missing=True)``).
    label_column : str or None
        Class label (not a feature), if any.
    schema : str or None
        JSON file in :data:`SAMPLE_DIR` with the declared :class:`~dpkme.schema.TableSchema` of all
        columns (mixed tables), read by :func:`load_schema`.
    """

    name: str
    label: str
    filename: str
    description: str
    source: str
    licence: str
    citation: str
    n_rows: int
    n_columns: int
    numeric_columns: tuple[str, ...]
    label_column: str | None = None
    schema: str | None = None

    @property
    def path(self) -> Traversable:
        """The CSV file (a package resource)."""
        return SAMPLE_DIR / self.filename

    @property
    def schema_path(self) -> Traversable | None:
        """The declared schema's JSON file (a package resource), or None."""
        return None if self.schema is None else SAMPLE_DIR / self.schema

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["numeric_columns"] = list(self.numeric_columns)
        return d


_UCI_LICENCE = (
    "CC BY 4.0 (UCI Machine Learning Repository); redistributed in scikit-learn (BSD-3-Clause), "
    "whose documentation states no separate licence"
)

_WINE_COLUMNS = (
    "alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids",
    "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "od280_od315_of_diluted_wines",
    "proline",
)
_BC_FEATURES = (
    "radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity",
    "concave_points", "symmetry", "fractal_dimension",
)
_BC_COLUMNS = tuple(f"{f}_{s}" for s in ("mean", "se", "worst") for f in _BC_FEATURES)

SAMPLES: dict[str, SampleInfo] = {
    info.name: info
    for info in (
        SampleInfo(
            name="wine",
            label="Wine recognition (UCI)",
            filename="wine.csv",
            description=(
                "Chemical analysis of 178 wines from three cultivars grown in the same region of Italy: "
                "13 measurements per wine (alcohol, acids, phenols, colour, proline, ...). "
                "Label: cultivar (1, 2, 3). Features have very different scales (proline ~ 300-1700, "
                "hue ~ 0.5-1.7): declare a scaling before using an isotropic kernel."
            ),
            source="UCI Machine Learning Repository, 'Wine' (Forina et al., PARVUS); copy bundled with scikit-learn",
            licence=_UCI_LICENCE,
            citation="Aeberhard, S. & Forina, M. (1991). Wine. UCI Machine Learning Repository. "
            "https://doi.org/10.24432/C5PC7J",
            n_rows=178,
            n_columns=14,
            numeric_columns=_WINE_COLUMNS,
            label_column="cultivar",
        ),
        SampleInfo(
            name="breast_cancer",
            label="Breast Cancer Wisconsin (Diagnostic)",
            filename="breast_cancer.csv",
            description=(
                "569 breast-mass fine-needle aspirates: 30 features of the cell nuclei (mean, standard "
                "error and worst value of radius, texture, perimeter, area, smoothness, compactness, "
                "concavity, concave points, symmetry, fractal dimension). Label: diagnosis M (malignant, "
                "212) or B (benign, 357). A realistic 'sensitive medical table'."
            ),
            source="UCI Machine Learning Repository, 'Breast Cancer Wisconsin (Diagnostic)' "
            "(Wolberg, Street, Mangasarian); copy bundled with scikit-learn (patient IDs not included)",
            licence=_UCI_LICENCE,
            citation="Wolberg, W., Mangasarian, O., Street, N. & Street, W. (1995). Breast Cancer Wisconsin "
            "(Diagnostic). UCI Machine Learning Repository. https://doi.org/10.24432/C5DW2B",
            n_rows=569,
            n_columns=31,
            numeric_columns=_BC_COLUMNS,
            label_column="diagnosis",
        ),
        SampleInfo(
            name="iris",
            label="Iris (Fisher 1936)",
            filename="iris.csv",
            description=(
                "150 iris flowers, 50 of each species (setosa, versicolor, virginica): sepal and petal "
                "length and width in cm. Label: species. Small and 4-D: quick to release and plot."
            ),
            source="R. A. Fisher (1936); scikit-learn's copy, which follows Fisher's paper (the UCI copy "
            "differs in two values)",
            licence=_UCI_LICENCE,
            citation="Fisher, R. A. (1936). Iris. UCI Machine Learning Repository. https://doi.org/10.24432/C56C76",
            n_rows=150,
            n_columns=5,
            numeric_columns=("sepal_length", "sepal_width", "petal_length", "petal_width"),
            label_column="species",
        ),
        SampleInfo(
            name="diabetes",
            label="Diabetes progression (Efron et al. 2004)",
            filename="diabetes.csv",
            description=(
                "442 diabetes patients in original units: age (years), sex (coded 1/2), body-mass index, "
                "average blood pressure and six blood-serum measurements s1-s6, plus 'progression', a "
                "quantitative measure of disease progression one year after baseline (a regression "
                "target, not a class label)."
            ),
            source="B. Efron, T. Hastie, I. Johnstone, R. Tibshirani, 'Least Angle Regression' (2004), data "
            "distributed by the authors (https://www4.stat.ncsu.edu/~boos/var.select/diabetes.html); "
            "unscaled copy bundled with scikit-learn",
            licence="No licence stated by the original distributors; redistributed in scikit-learn "
            "(BSD-3-Clause) and the R package 'lars'. Use for teaching/research with citation.",
            citation="Efron, B., Hastie, T., Johnstone, I. & Tibshirani, R. (2004). Least angle regression. "
            "Annals of Statistics 32(2), 407-499.",
            n_rows=442,
            n_columns=11,
            numeric_columns=("age", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"),
            label_column=None,
        ),
        SampleInfo(
            name="penguins",
            label="Palmer penguins (mixed: categories, missing values)",
            filename="penguins.csv",
            description=(
                "344 adult penguins of three species (Adelie 152, Chinstrap 68, Gentoo 124) on three islands "
                "of the Palmer Archipelago, Antarctica, 2007-2009: species, island and sex (categorical; sex "
                "missing for 11), bill length and depth, flipper length and body mass (numeric; missing for 2) "
                "and year (integer). A mixed table with missing values; its declared schema is "
                "penguins.schema.json."
            ),
            source="Gorman, Williams & Fraser (2014), Palmer Station Antarctica LTER; the R package "
            "'palmerpenguins' (Horst, Hill & Gorman); copy from the Python package palmerpenguins 0.1.6",
            licence="CC0 1.0 (public domain dedication) under the Palmer Station LTER Data Policy, as stated "
            "by palmerpenguins; the Python package's code is MIT-licensed",
            citation="Gorman, K. B., Williams, T. D. & Fraser, W. R. (2014). Ecological sexual dimorphism and "
            "environmental variability within a community of Antarctic penguins (genus Pygoscelis). PLoS ONE "
            "9(3), e90081. https://doi.org/10.1371/journal.pone.0090081",
            n_rows=344,
            n_columns=8,
            numeric_columns=("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"),
            label_column="species",
            schema="penguins.schema.json",
        ),
        SampleInfo(
            name="seattle_weather",
            label="Seattle weather 2012-2015 (mixed: dates, categories)",
            filename="seattle_weather.csv",
            description=(
                "1461 days of weather in Seattle, 2012-01-01 to 2015-12-31: the date, precipitation (mm), "
                "daily maximum and minimum temperature (degrees C), mean wind speed (m/s) and the weather "
                "type (drizzle, fog, rain, snow, sun). A mixed table with a date column; its declared schema "
                "is seattle_weather.schema.json."
            ),
            source="NOAA National Climatic Data Center daily observations, transformed by the Vega project "
            "(vega-datasets); copy from the Python package vega_datasets 0.9.0",
            licence="Public domain (NOAA data, a work of the U.S. government, as stated by vega_datasets); the "
            "vega_datasets package is MIT-licensed",
            citation="Vega project, vega-datasets, 'seattle-weather.csv' (NOAA NCDC daily data for Seattle, "
            "2012-2015), https://github.com/vega/vega-datasets",
            n_rows=1461,
            n_columns=6,
            numeric_columns=("precipitation", "temp_max", "temp_min", "wind"),
            label_column="weather",
            schema="seattle_weather.schema.json",
        ),
    )
}


def load_sample(name: str) -> tuple[pd.DataFrame, SampleInfo]:
    """Load a bundled sample table by name (see :data:`SAMPLES`).

    The CSV is read through :func:`load_table`, like an upload (missing cells become NaN; dates stay
    text until a schema parses them).

    Parameters
    ----------
    name : str
        A key of :data:`SAMPLES`.

    Returns
    -------
    df : pandas.DataFrame
    info : SampleInfo
        Description, source, licence, recommended ``numeric_columns`` and
        ``label_column``; ``numeric_matrix(df, info.numeric_columns)`` gives the
        feature matrix.
    """
    if name not in SAMPLES:
        raise ValueError(f"unknown sample {name!r}; choose one of {sorted(SAMPLES)}.")
    info = SAMPLES[name]
    if not info.path.is_file():
        raise ValueError(
            f"sample file {str(info.path)!r} is missing; it is package data of dpkme.datasets "
            "(reinstall dpkme or check out the full repository)."
        )
    df = load_table(info.path.read_bytes(), filename=info.filename)
    if df.shape != (info.n_rows, info.n_columns):
        raise ValueError(
            f"sample file {info.filename!r} has shape {df.shape}, expected {(info.n_rows, info.n_columns)}; "
            "it has been modified -- restore it from the repository."
        )
    return df, info


def load_schema(name: str):
    """The declared :class:`~dpkme.schema.TableSchema` of a bundled mixed table.

    The schema was declared from the data's documentation and from public knowledge (physically
    sensible round bounds), not from the rows; see ``dpkme/datasets/data/README.md``.

    Parameters
    ----------
    name : str
        A key of :data:`SAMPLES` whose ``schema`` is set (``"penguins"``, ``"seattle_weather"``).

    Returns
    -------
    TableSchema

    Examples
    --------
    >>> schema = load_schema("penguins")
    >>> schema.names[:3], schema["species"].categories
    (('species', 'island', 'bill_length_mm'), ('Adelie', 'Chinstrap', 'Gentoo'))
    >>> df, info = load_sample("penguins")
    >>> schema.encode(df).shape
    (344, 22)
    """
    from ..schema import TableSchema

    if name not in SAMPLES:
        raise ValueError(f"unknown sample {name!r}; choose one of {sorted(SAMPLES)}.")
    info = SAMPLES[name]
    path = info.schema_path
    if path is None:
        with_schema = sorted(k for k, v in SAMPLES.items() if v.schema)
        raise ValueError(f"sample {name!r} has no declared schema (a numeric table); samples with one: "
                         f"{with_schema}.")
    if not path.is_file():
        raise ValueError(f"schema file {str(path)!r} is missing; it is package data of dpkme.datasets "
                         "(reinstall dpkme or check out the full repository).")
    return TableSchema.from_json(path.read_text(encoding="utf-8"))

"""Sphinx configuration of dpkme's documentation site.

Build it with (warnings are errors; ``tests/project/test_docs.py`` runs the same build)::

    sphinx-build -W -b html docs docs/_build/html

Pages are MyST markdown (``*.md``); the API reference is generated from the numpydoc docstrings by autosummary
(one page per module, ``docs/api/generated/``, written at build time and not tracked).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))          # the checkout's dpkme, also without `pip install -e .`

from dpkme import __version__  # noqa: E402

project = "dpkme"
author = "dpkme developers"
copyright = "2026, dpkme developers"  # the name Sphinx reads (it shadows the builtin)
version = release = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "screenshots", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# --- API reference -------------------------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "none"             # the numpydoc Parameters sections give the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False    # autodoc lists the members once
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()   # tests/project/test_docstrings.py validates the docstrings

# --- MyST ----------------------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# --- HTML ----------------------------------------------------------------------------------------------------
# pydata-sphinx-theme (numpy's and scikit-learn's; pinned in tests/requirements.txt) ships its fonts and icons in the
# package: the build fetches nothing, and the pages load no web font. The GitHub link is an icon in the header only.
html_theme = "pydata_sphinx_theme"
html_title = f"dpkme {__version__}"
html_static_path: list[str] = []
html_theme_options = {
    "github_url": "https://github.com/dpkme/dpkme",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}


# --- docstrings ----------------------------------------------------------------------------------------------
def _lengthen_short_underlines(app, what, name, obj, options, lines):
    """A section title's underline one or two characters short (``:math:`` roles make titles long) is lengthened.

    docutils warns about such titles; with ``-W`` one would fail the build although the text renders. The other
    docstring problems (substitutions, malformed tables) are fixed in the source.
    """
    for i in range(1, len(lines)):
        under, title = lines[i], lines[i - 1]
        if under and set(under) <= set("-=~^") and len(set(under)) == 1 and title.strip() \
                and 0 < len(title) - len(under) <= 2:
            lines[i] = under[0] * len(title)


def _is_header(lines, i):
    return (i + 1 < len(lines) and lines[i].strip() != "" and set(lines[i + 1].strip()) == {"-"}
            and len(lines[i + 1].strip()) >= len(lines[i].strip()))


def _guarantee_as_admonition(app, what, name, obj, options, lines):
    """A docstring's ``Guarantee`` section (the privacy guarantee, not a numpydoc section) becomes an admonition.

    numpydoc drops sections it does not know, so the guarantee would be missing from the API pages; it is moved,
    as a ``Guarantee`` box, to the end of the extended summary (before the first section). Runs before numpydoc.
    """
    for i in range(len(lines)):
        if lines[i].strip() == "Guarantee" and _is_header(lines, i):
            end = next((j for j in range(i + 2, len(lines)) if _is_header(lines, j)), len(lines))
            content = lines[i + 2:end]
            del lines[i:end]
            first = next((j for j in range(len(lines)) if _is_header(lines, j)), len(lines))
            box = [".. admonition:: Guarantee", ""] + [("   " + line) if line.strip() else "" for line in content]
            lines[first:first] = [*box, ""]
            return


# numpydoc also parses the raw docstrings (for signatures) and warns there about the Guarantee section, which the
# hook above has already moved for the rendered page.
warnings.filterwarnings("ignore", message="Unknown section Guarantee", category=UserWarning)


def setup(app):
    app.connect("autodoc-process-docstring", _guarantee_as_admonition, priority=100)   # before numpydoc (500)
    app.connect("autodoc-process-docstring", _lengthen_short_underlines)

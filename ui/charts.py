"""The one way a page draws a Plotly figure: :func:`plotly_chart` (the shared layout of ``ui.figures.themed``).

Every page and UI helper calls :func:`plotly_chart` instead of ``st.plotly_chart`` (``tests/test_app_projector.py``
checks that none calls Streamlit's directly), so every figure gets the same legible type -- larger in presentation
mode -- and log axes labelled with whole values.
"""

from __future__ import annotations

import streamlit as st

from .figures import themed
from .presentation import is_on

__all__ = ["plotly_chart"]


def plotly_chart(fig, **kwargs):
    """``st.plotly_chart(themed(fig), **kwargs)``, with presentation mode's larger type when it is on."""
    return st.plotly_chart(themed(fig, presentation=is_on()), **kwargs)

"""Kernel & privacy: kernel family and lengthscale, ε (log slider) and δ, calibration, live explanation."""

import streamlit as st

from ui import presentation as P
from ui.frame import require_frame
from ui.views import kernel as V
from ui.widgets import PAGE_RELEASE, require_dataset

require_frame(__file__)

ds = require_dataset()
P.stepper("privacy")
V.header()
kernel, eps, delta = V.settings(ds)
if kernel is None or eps is None:
    st.stop()
V.noise_explanation(ds, kernel, eps, delta)
st.page_link(PAGE_RELEASE, label="Next: release the data →", icon=":material/rocket_launch:")

"""Data: generate, load a bundled sample or upload a table; publishable subset; declared preprocessing."""

import streamlit as st

from ui.frame import require_frame
from ui.views import data as V
from ui.widgets import PAGE_KERNEL

require_frame(__file__)

V.header()
d = V.source_choice()          # where the rows come from; the sections below fill in the dataset's spec
V.source_section(d)            # left column: the generator, sample or upload and its columns
V.split_section(d)             # right column: the publishable and held-out split, the declared scaling
V.schema_section(d)            # a mixed table: its declared schema
shown = V.build_section(d)     # the dataset to use (stops when the settings failed)
V.preview_section(d, shown)    # the owner's preview (stops when hidden)
st.page_link(PAGE_KERNEL, label="Next: choose the kernel and the privacy level →", icon=":material/tune:")

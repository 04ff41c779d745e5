"""dpkme — differentially private data release through kernel mean embeddings (Streamlit app).

Run with ``streamlit run app.py``. This file is the frame: page configuration,
shared state (a default dataset so that every page works at once), the sidebar
summary (current data, privacy spent) and the navigation. Pages live in
``pages/``; helpers shared by pages in ``ui/`` (not a page).
"""

from pathlib import Path

import streamlit as st

# The page icon is a bundled image: a ":material/…:" or emoji icon is fetched by the browser from an outside host
# (fonts.gstatic.com, a CDN), and the app makes no outside request (tests/test_browser_offline.py).
st.set_page_config(page_title="dpkme — private data release with kernel mean embeddings",
                   page_icon=str(Path(__file__).resolve().parent / "ui" / "assets" / "icon.png"), layout="wide")

from ui import persist
from ui import state as S
from ui.datasets import load_default
from ui.frame import running_frame
from ui.presentation import setup as presentation_setup
from ui.widgets import guard, sidebar_summary

persist.begin()                # a reload gets this session's state back (ui/persist.py), before anything reads it
S.init_defaults()
if S.dataset() is None:
    with guard("load the default dataset"):
        S.set_dataset(load_default())

pages = {
    "Start": [
        st.Page("pages/home.py", title="Home", icon=":material/home:", url_path="home", default=True),
    ],
    "Private release": [
        st.Page("pages/data.py", title="Data", icon=":material/table_view:", url_path="data"),
        st.Page("pages/kernel.py", title="Kernel & privacy", icon=":material/tune:", url_path="kernel"),
        st.Page("pages/release.py", title="Release", icon=":material/rocket_launch:", url_path="release"),
    ],
    "Explore": [
        st.Page("pages/curves.py", title="Privacy–utility curves", icon=":material/show_chart:", url_path="curves"),
        st.Page("pages/use.py", title="Third-party use", icon=":material/calculate:", url_path="use"),
        st.Page("pages/twosample.py", title="Two-sample test", icon=":material/compare_arrows:", url_path="twosample"),
        st.Page("pages/clustering.py", title="Clustering", icon=":material/bubble_chart:", url_path="clustering"),
        st.Page("pages/generative.py", title="Generative release", icon=":material/draw:", url_path="generative"),
        st.Page("pages/ledger.py", title="Budget ledger", icon=":material/account_balance_wallet:", url_path="ledger"),
        st.Page("pages/audit.py", title="Privacy audit", icon=":material/policy:", url_path="audit"),
    ],
}
page = st.navigation(pages)
presentation_setup()           # the toggle, ?present=1 and the larger type (ui/presentation.py)
sidebar_summary()
persist.notice()
try:
    with running_frame():      # pages check it: a deep link may first run a page alone (ui/frame.py)
        page.run()
finally:
    persist.save()             # keys the page added in this run (also when it stops or reruns)

"""Streamlit code of the dpkme app (not a page itself): helpers shared by the pages, and each page's views.

* :mod:`.state`     -- session-state keys, the current dataset, releases, the ledger;
* :mod:`.datasets`  -- building a dataset (generate / sample / upload + public preprocessing);
* :mod:`.compute`   -- ``st.cache_data`` wrappers of deterministic library calls;
* :mod:`.widgets`   -- the log-scale epsilon slider, error guards, small UI pieces;
* :mod:`.figures`   -- Plotly figure builders;
* :mod:`.mechanisms` -- the registry of release mechanisms shown on the Release page: one module per
  mechanism (baseline, Algorithm 1, Algorithm 2, exponential mechanism, cluster-wise release, GP function
  release) listed in a fixed order, with :mod:`.mechanisms.spec` (MechanismSpec, RunContext, shared controls);
* :mod:`.runner`    -- run a mechanism: budget check first, evaluation, record, ledger charge (the library's
  own charge of the release when the mechanism has one, with the part of the data it read);
* :mod:`.export`    -- downloads built in memory (CSV of points and weights, JSON of parameters);
* :mod:`.presentation` -- presentation mode: the sidebar toggle (``?present=1``), larger type, the one gate of
  owner-only views and formulas, the stepper Data → Privacy → Release → Use;
* :mod:`.budget_hint` -- next to the Release button: a release the budget would refuse, and what to do.

Page-specific code is in :mod:`.views`: one module per page of ``pages/`` (``ui/views/<page>.py``: its view
functions and its own session keys; ``pages/<page>.py`` only calls them) and that page's own helpers
(``ui/views/<page>_<part>.py``: :mod:`.views.curves_comparisons`, the Curves page's comparisons at equal ε;
:mod:`.views.data_schema_editor`, the Data page's schema editor). The modules above are shared by several pages
and never import a view (``tests/app/test_structure.py``).

``app.py`` lists the pages with ``st.navigation``; this package is imported by
them and is never listed as a page. Nothing here writes to disk.
"""

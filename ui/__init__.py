"""Streamlit helpers shared by the pages of the dpkme app (not a page itself).

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
* :mod:`.comparisons` -- the Curves page's comparisons at equal ε (exponential mechanism, GP release vs
  Algorithms 1 and 2), plain library calls;
* :mod:`.export`    -- downloads built in memory (CSV of points and weights, JSON of parameters);
* :mod:`.presentation` -- presentation mode: the sidebar toggle (``?present=1``), larger type, the one gate of
  owner-only views and formulas, the stepper Data → Privacy → Release → Use;
* :mod:`.budget_hint` -- next to the Release button: a release the budget would refuse, and what to do.

``app.py`` lists the pages with ``st.navigation``; this package is imported by
them and is never listed as a page. Nothing here writes to disk.
"""

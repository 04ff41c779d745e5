"""Page-specific UI code: one module per page of ``pages/`` (same name), holding that page's view functions and
its own session keys; the page script itself only calls them. A helper used by one page only is named after it
(``<page>_<part>``: :mod:`.curves_comparisons`, :mod:`.data_schema_editor`).

Code shared by several pages stays one level up in :mod:`ui` (state keys, the gate, widgets, figure builders,
charts, numbers, ...). Nothing in :mod:`ui` outside this package imports it.
"""

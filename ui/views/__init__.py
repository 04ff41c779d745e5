"""Page-specific UI code: one module per page of ``pages/`` (same name), holding that page's view functions and
its own session keys; the page script itself only calls them.

Code shared by several pages stays one level up in :mod:`ui` (state keys, the gate, widgets, figure builders,
charts, numbers, ...). Nothing in :mod:`ui` outside this package imports it.
"""

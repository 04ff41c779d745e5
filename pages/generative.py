"""Generative release: DPGM (Acs et al.) — private kernel k-means, then one DP-SGD-trained VAE/RBM per cluster.

UI only: the views are in ``ui/views/generative.py``; the data, planning, run, evaluation and files in
``ui/generative.py`` and ``dpkme.generative``.
"""

from ui.frame import require_frame
from ui.views import generative as V

require_frame(__file__)

V.header()
settings = V.settings()                 # left column: data, privacy, model (stops the page without data)
plan = V.planning(settings)             # right column: the public plan, nothing spent
V.paper_figure2()
stop_signal = V.run_section(settings, plan)
V.stored_run(settings)
V.finish(stop_signal)                   # a Stop during this run is re-raised after its models were drawn

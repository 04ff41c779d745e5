"""Clustering: DP kernel k-means (Acs et al.) — budget split, centres in data space, accuracy vs ε, accounting."""

from ui.frame import require_frame
from ui.views import clustering as V
from ui.widgets import require_dataset

require_frame(__file__)

ds = require_dataset()
V.header()
kernel = V.require_kernel()
run = V.run_section(ds, kernel)         # settings, the public budget split, a run on the button
V.stored_run(ds, run)
V.accuracy_section(ds, kernel, run)
V.accounting_section(run)

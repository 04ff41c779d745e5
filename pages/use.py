"""Use the release: what a third party computes from weighted points (eq. (4)) — means, covariances,
box probabilities — next to the private truth, and an MMD comparison with held-out data."""

from ui import presentation as P
from ui.frame import require_frame
from ui.views import use as V
from ui.widgets import require_dataset

require_frame(__file__)

ds = require_dataset()
P.stepper("use")
V.header()
rec = V.choose_release(ds)      # stops when this data has no weighted-points release
V.estimates(ds, rec)
V.mmd_section(ds, rec)

"""Budget ledger: every private release of a dataset spends budget; totals under basic, RDP and PLD composition."""

from ui.frame import require_frame
from ui.views import ledger as V
from ui.widgets import require_dataset

require_frame(__file__)

ds = require_dataset()
V.header()
eps_b, delta_b, led = V.budget(ds)      # an uploaded ledger is merged first: the totals below include it
V.spent(ds, led, eps_b, delta_b)
V.how_it_works(led)
V.export_import(ds, led)
V.start_over(ds, led, delta_b)
V.other_ledgers(delta_b)

"""Privacy audit: a live empirical audit of every mechanism, and exhibits of privacy bugs.

Live audit (top): :func:`dpkme.audit.run_audit` on synthetic worst-case neighbouring datasets (never the user's
data), with the predicted time from :func:`dpkme.cost.estimate_cost`, a confirmation above its threshold, and
two plots: the privacy-loss distribution and the ε(δ) curves (claimed, exact for the pair, audited lower bounds).
Membership-inference attack (middle): :func:`dpkme.audit.membership.membership_attack`, the attacker's accuracy
against ε next to the bound (e^ε + δ)/(1 + e^ε) and the exact accuracy Φ(d/(2σ)) of the optimal attack.
Exhibits (below): bounds from published code or papers that a correct-looking implementation can hide.
The views are in ``ui/views/audit.py``.
"""

from ui.frame import require_frame
from ui.views import audit as V
from ui.widgets import require_dataset

require_frame(__file__)

V.header()
V.live_audit()
V.membership_section()
V.exhibits_header()
ds = require_dataset()          # the exhibits only: the audits above never read the user's data
V.exhibits(ds)

"""Private two-sample tests (Raj et al. 2019 via dpkme.two_sample): test a release, run one test, curves."""

from ui.frame import require_frame
from ui.views import twosample as V
from ui.widgets import require_dataset

require_frame(__file__)

ds = require_dataset()
V.header()
mode = V.mode_choice()
if mode == "release":
    V.release_mode(ds)                  # test my release against the held-out rows (then stops)
if mode == "one":
    V.one_mode(ds)                      # one private test on two samples (then stops)
V.curves_intro()                        # rejection curves: simulations on generated cases, nothing charged
settings = V.curve_settings()
stop_signal = V.curve_run(settings)
V.curve_results(settings, stop_signal)  # re-raises a Stop of this run after drawing what was done

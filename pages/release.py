"""Release: choose a mechanism, run it on a button press, see and download the weighted synthetic points."""

from ui import presentation as P
from ui import state as S
from ui.frame import require_frame
from ui.views import release as V
from ui.widgets import require_dataset

require_frame(__file__)

ds = require_dataset()
P.stepper("release")
task = V.finished_task()                # a background release that finished is recorded first
V.header()
banner = V.settings_banner(ds)          # stops without a kernel
controls = V.controls(ds, banner, task) # left column: the mechanism, its settings and the Release button
V.background(task, controls)
recs = S.releases_for(ds)
V.explorer(ds, controls, recs)
rec = V.choose_release(ds, recs, controls.right)    # stops when this data has no release
if rec.kind == "function":
    V.function_release(ds, rec, recs, controls.right)   # a GP release (then stops)
V.points_release(ds, rec, recs, controls.right)
V.repeat_section(ds, controls)
V.all_releases_table(recs)

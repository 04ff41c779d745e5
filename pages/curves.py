"""Privacy–utility curves: RKHS distance against M and ε, with repetitions; paper presets; CSV export."""

from ui.frame import require_frame
from ui.views import curves as V
from ui.widgets import require_dataset

require_frame(__file__)

ds = require_dataset()
V.header()
preset = V.preset_choice()
if preset in ("exp", "gp"):
    V.comparison_section(ds, preset)    # the exponential mechanism or the GP release at equal ε (then stops)
settings = V.settings(ds, preset)
config = V.run_config(ds, preset, settings)
V.compute(ds, preset, settings, config)
V.results(settings.right, config.key)

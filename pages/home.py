"""Home: what the tool does, the paper's three-step template as a figure, presets for a lecture and a stakeholder
demo, a one-click paper example, the guided tour (views: ``ui/views/home.py``)."""

from ui.frame import require_frame
from ui.views import home as V

require_frame(__file__)

V.open_preset_page()
V.intro()
V.presets()
V.three_steps()
V.paper_example()
V.tour()
V.promise()

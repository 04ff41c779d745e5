"""Privacy audit page (AppTest): each exhibit finds neighbours on which the claimed ε is exceeded."""

from test_app_shared import as_float, metric, new_app, ok


def test_audit_exhibits_show_the_claimed_epsilon_is_exceeded():
    at = new_app().run()
    at.switch_page("pages/audit.py").run()
    ok(at)
    # 1. cos(ωx + b) features: norms above 1, so adding a row moves the mean by more than 1/N
    assert as_float(metric(at, "Largest ‖φ(x)‖ found")) > 1.0
    assert as_float(metric(at, "Add/remove: ε really achieved")) > 1.0          # claimed: ε = 1
    # 2. the perturbed two-sample statistic: the change dwarfs the published bound
    change = as_float(metric(at, "Change on two neighbours"))
    bound = as_float(metric(at, "Published sensitivity bound"))
    assert change > 1000 * bound
    # 3. the d-independent L1 sensitivity is not private when d > N
    table = at.dataframe[0].value
    assert (table["private?"] == "no").any() and (table["private?"] == "yes (loose)").any()
    bad = table[table["private?"] == "no"]
    assert (bad["ε really achieved (claimed ε)"] > 1.0).all()


def test_fewer_features_fluctuate_more():
    at = new_app().run()
    at.switch_page("pages/audit.py").run()
    small = as_float(metric(at, "Largest ‖φ(x)‖ found"))
    at.select_slider(key="aud.J").set_value(1000).run()
    ok(at)
    assert as_float(metric(at, "Largest ‖φ(x)‖ found")) < small

"""Structure of the app's privacy boundary (issue 24): pages and UI modules reach the library's private mechanisms
and the ledgers only through the gate (``ui/gate.py``), checked on the source with ``ast``.

* A call of a private mechanism (a release, a private choice or discovery, a private test, a private clustering,
  DPGM, the registry's ``run_spec``) in ``pages/`` or ``ui/`` must sit inside the ``compute`` of a
  ``run_private(...)`` call -- a lambda written there or a function passed there by name -- or in the registry
  (``ui/mechanisms/``, whose ``run`` functions only ``run_spec`` calls), or be one of the owner-only uses listed in
  :data:`OWNER_ONLY` with the reason it releases nothing.
* Only the gate adds charges to a ledger (and the ledger module, to a throw-away ledger that composes charges for
  display); only the ledger module merges (an import, matched by ids), only the
  runner annotates a charge with what the finished release did, only the Budget ledger page resets.
* No page passes ``len(private rows)`` as a declared size: ``declared_n=`` never reads ``.n`` or ``len(``.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The library's private mechanisms (functions that read private rows and whose output is meant to be released).
MECHANISMS = {
    "algorithm1", "algorithm2", "release_table", "gp_release", "exponential_mechanism", "dp_kernel_kmeans",
    "clusterwise_release", "dpgm", "tcmc_test", "nte_test", "release_test", "private_lengthscale",
    "private_bounds", "private_categories", "private_row_count", "run_spec",
}
#: (file, enclosing function) -> why that call of a mechanism releases nothing and needs no charge.
OWNER_ONLY = {
    ("ui/runner.py", "replay"): "re-runs a seeded release with its recorded seed: a replayable demo, never private "
                                "(the original was not charged either)",
    ("ui/explorer.py", "run_explorer"): "planning runs on public/simulated rows (or, on the owner's opt-in, the "
                                        "private rows: the ε it suggests is then tainted by the gate); never released",
    ("ui/views/curves_comparisons.py", None): "owner-only comparison curves on the owner's screen (hidden in presentation mode); "
                                 "never released or downloadable as a release",
    ("ui/generative.py", "evaluate"): "the owner's MMD evaluation: an uncharged Algorithm 2 run shown only as an "
                                      "OwnerOnly value, never released",
    ("ui/views/curves.py", None): "privacy-utility curves: simulations for the owner, labelled owner-only",
    ("ui/views/home.py", "_template_example"): "an illustration on generated public data (seeded); no user data",
}
LEDGER_WRITES = {"add": {"ui/gate.py", "ui/state.py"}, "merge": {"ui/state.py"}, "annotate": {"ui/runner.py"},
                 "reset": {"ui/views/ledger.py"}}


def _sources():
    for folder in ("pages", "ui"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _called_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def _parents(tree):
    parent = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parent[child] = node
    return parent


def _wrappers(tree) -> set:
    """Functions of this module that forward one of their parameters as ``compute=`` to ``run_private``."""
    out = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and _called_name(node) == "run_private" and any(
                        kw.arg == "compute" and isinstance(kw.value, ast.Name) and kw.value.id in params
                        for kw in node.keywords):
                    out.add(fn.name)
    return out


def _compute_targets(tree) -> tuple[set, set]:
    """(lambda nodes, function names) passed as ``compute=`` to ``run_private`` (or a wrapper of it)."""
    gates = {"run_private"} | _wrappers(tree)
    lambdas, names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called_name(node) in gates:
            for kw in node.keywords:
                if kw.arg == "compute":
                    if isinstance(kw.value, ast.Lambda):
                        lambdas.add(kw.value)
                    elif isinstance(kw.value, ast.Name):
                        names.add(kw.value.id)
    return lambdas, names


def _ungated_calls(rel, tree, mechanisms):
    """``(call, enclosing def names)`` for every call of a mechanism that is not inside a compute."""
    parent = _parents(tree)
    lambdas, names = _compute_targets(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called_name(node) in mechanisms):
            continue
        chain, cur = [], node
        while cur in parent:
            cur = parent[cur]
            chain.append(cur)
        defs = [c.name for c in chain if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if any(c in lambdas for c in chain) or any(d in names for d in defs):
            continue
        if (rel, None) in OWNER_ONLY or any((rel, d) in OWNER_ONLY for d in defs):
            continue
        yield node, defs


def _violations():
    """Calls of private mechanisms outside the gate. A function that calls one outside a compute becomes a
    mechanism itself (its callers must be gated), and must not be handed out as a callback."""
    sources = [(rel, tree) for rel, tree in _sources()
               if not (rel.startswith("ui/mechanisms/") or rel == "ui/gate.py")]
    mechanisms = set(MECHANISMS)
    derived: set = set()
    changed = True
    while changed:
        changed = False
        for rel, tree in sources:
            for _node, defs in _ungated_calls(rel, tree, mechanisms):
                if defs and defs[-1] not in mechanisms:
                    mechanisms.add(defs[-1])          # the module-level function that holds the call
                    derived.add((rel, defs[-1]))
                    changed = True
    out = []
    for rel, tree in sources:
        for node, defs in _ungated_calls(rel, tree, mechanisms):
            if not defs:                               # a page's own script: no caller can gate it
                out.append(f"{rel}:{node.lineno} calls {_called_name(node)}() outside the gate")
        parent = _parents(tree)
        _lambdas, names = _compute_targets(tree)
        own = {d for r, d in derived if r == rel}
        for node in ast.walk(tree):                    # a derived mechanism of this module handed out as a callback
            ref = node.id if isinstance(node, ast.Name) else None
            if ref is None or not isinstance(node.ctx, ast.Load) or ref not in own:
                continue
            up = parent.get(node)
            if isinstance(up, ast.Call) and up.func is node:
                continue
            if isinstance(up, ast.Attribute) or ref in names or (isinstance(up, ast.keyword) and up.arg == "compute"):
                continue
            out.append(f"{rel}:{node.lineno} hands {ref} (which runs a mechanism outside the gate) to a callback")
    return out


def test_pages_reach_private_mechanisms_only_through_the_gate():
    assert _violations() == []


def test_the_structure_check_catches_a_direct_call(tmp_path, monkeypatch):
    """The check itself: a page that calls a mechanism directly is reported (the check can fail)."""
    bad = ast.parse("import dpkme\nrel = dpkme.algorithm2(ds.X, kernel=k, epsilon=1, delta=1e-6)\n")
    good = ast.parse("run = G.run_private(page='p', ds=ds, charges=c, noise_source=None,\n"
                     "                    compute=lambda i: dpkme.algorithm2(ds.X))\n")
    monkeypatch.setitem(globals(), "_sources", lambda: iter([("pages/bad.py", bad), ("pages/ok.py", good)]))
    assert _violations() == ["pages/bad.py:2 calls algorithm2() outside the gate"]


@pytest.mark.parametrize("method", sorted(LEDGER_WRITES))
def test_only_the_gate_writes_to_a_ledger(method):
    allowed = LEDGER_WRITES[method]
    found = []
    for rel, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method:
                target = ast.unparse(node.func.value)
                if "led" in target.lower() or "ledger" in target.lower():
                    found.append(rel)
    assert set(found) <= allowed, f"{method}() on a ledger in {sorted(set(found) - allowed)}"


def test_no_page_declares_the_private_row_count():
    for rel, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called_name(node) in ("run_private", "row_count"):
                for kw in node.keywords:
                    if kw.arg in ("declared_n", "declared") and kw.value is not None:
                        text = ast.unparse(kw.value)
                        assert ".n" not in text and "len(" not in text and "shape" not in text, (rel, text)


def test_every_page_that_charges_has_its_own_over_budget_permission():
    """A page whose runs can be refused by the budget offers its own permission (the Clustering page had none and
    its message told the user to tick another page's box). A page's runs are in its view module (``ui/views/``)."""
    checked = 0
    for rel, tree in _sources():
        if not rel.startswith(("pages/", "ui/views/")):
            continue
        pages_called = {ast.literal_eval(kw.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
                        and _called_name(node) == "run_private" for kw in node.keywords
                        if kw.arg == "page" and isinstance(kw.value, ast.Constant)}
        boxes = {ast.literal_eval(node.args[0]) for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and _called_name(node) == "over_budget_checkbox" and node.args
                 and isinstance(node.args[0], ast.Constant)}
        assert pages_called <= boxes, (rel, pages_called - boxes)
        checked += bool(pages_called)
    assert checked >= 4          # the views that charge: kernel, clustering, generative, two-sample

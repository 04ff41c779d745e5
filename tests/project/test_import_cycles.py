"""The import graph of dpkme has no cycle, and privacy does not depend on an application module.

The graph is read from the source with :mod:`ast` (nothing is imported): an edge ``a -> b`` for every
``import``/``from ... import`` in module ``a`` that names a module ``b`` of dpkme. *Module-level* edges are the
statements that run when ``a`` is imported (including those under ``if``/``try``, excluding
``if TYPE_CHECKING:`` blocks); *function-level* edges are imports inside function bodies, which run only when
the function is called.

- At module level the graph is acyclic (a cycle there makes the import order matter).
- :mod:`dpkme.privacy` (calibration, sensitivity, accounting, leak guards, private bandwidths) imports, at any
  level, only the modules below it: :mod:`dpkme._validation`, :mod:`dpkme._version`, :mod:`dpkme.kernels`
  and itself -- never an
  application such as :mod:`dpkme.two_sample` (the median heuristic both need lives in
  :mod:`dpkme.kernels.median`).
- Counting function-level imports (and those under ``if TYPE_CHECKING:``) too, the graph is acyclic: every pair of
  modules depends in one direction only. The last such cycle, the table schema and the table kernels, is gone:
  :mod:`dpkme.schema` builds on :mod:`dpkme.kernels.additive`, which is told the schema's class by registration.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dpkme"

def _modules() -> dict[str, tuple[Path, bool]]:
    mods = {}
    for f in PACKAGE.rglob("*.py"):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        mods[".".join(parts)] = (f, is_package)
    return mods


MODULES = _modules()


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The dpkme modules an import statement of ``module`` loads (the named module, or its submodules)."""
    out = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            out |= {".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in MODULES}
        return out
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        name = ".".join(base) + ("." + node.module if node.module else "")
    else:
        name = node.module or ""
    if name.split(".")[0] != "dpkme":
        return out
    for alias in node.names:
        if f"{name}.{alias.name}" in MODULES:
            out.add(f"{name}.{alias.name}")
        elif name in MODULES:
            out.add(name)
    return out


def _module_level(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(stmts):
        for s in stmts:
            if isinstance(s, (ast.Import, ast.ImportFrom)):
                found.append(s)
            elif isinstance(s, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(s.test):
                    walk(s.body)
                walk(s.orelse)
            elif isinstance(s, ast.Try):
                walk(s.body)
                for handler in s.handlers:
                    walk(handler.body)
                walk(s.orelse)
                walk(s.finalbody)
            elif isinstance(s, ast.With):
                walk(s.body)

    walk(tree.body)
    return found


def _all_levels(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


@functools.cache
def import_graph(*, function_level: bool) -> dict[str, set[str]]:
    """``module -> the dpkme modules it imports`` (module level only, or every import in the file)."""
    graph = {}
    for module, (path, is_package) in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = _all_levels(tree) if function_level else _module_level(tree)
        graph[module] = set().union(*(_targets(module, is_package, n) for n in nodes)) - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.add(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(component)
    return found


def test_the_graph_is_read():
    graph = import_graph(function_level=False)
    assert "dpkme.privacy.bandwidth" in graph and "dpkme.release.subspace" in graph
    assert "dpkme.kernels.kernel" in graph["dpkme.two_sample.features"]


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_at_module_level():
    assert cycles(import_graph(function_level=False)) == []


def test_no_import_cycle_counting_imports_inside_functions():
    found = cycles(import_graph(function_level=True))
    assert found == [], f"import cycles (counting imports inside functions): {found}"


def test_the_schema_builds_on_the_table_kernels_not_the_reverse():
    graph = import_graph(function_level=True)
    assert "dpkme.kernels.additive" in graph["dpkme.schema.table"]
    kernels = [m for m in graph if m.startswith("dpkme.kernels")]
    assert not [m for m in kernels if any(t.startswith("dpkme.schema") for t in graph[m])]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("dpkme.privacy")))
def test_privacy_depends_only_on_lower_layers(module):
    allowed = ("dpkme._validation", "dpkme._version", "dpkme.kernels", "dpkme.privacy")
    imports = import_graph(function_level=True)[module]
    above = sorted(m for m in imports if not any(m == a or m.startswith(a + ".") for a in allowed))
    assert above == [], f"{module} imports {above}"


def test_registrations_stand_in_for_the_removed_imports():
    """kernels.kernel tells the engine its four classes, and kernels.additive adds itself to make_kernel."""
    from dpkme.kernels import additive, engine, kernel

    assert kernel.EXTRA_KERNELS["additive"] is additive.AdditiveKernel
    assert isinstance(kernel.kernel_from_dict(additive.AdditiveKernel(dim=2, blocks=[[0], [1]]).to_dict()), additive.AdditiveKernel)
    assert engine._spec(kernel.GaussianKernel(lengthscale=2.0)) == (("gaussian", None), (2.0, 1.0, 0.0))
    assert engine._spec(kernel.MaternKernel(nu=1.5, lengthscale=1.0))[0] == ("matern", 1.5)

    class Subclass(kernel.GaussianKernel):
        pass

    assert engine._spec(Subclass(lengthscale=1.0)) is None      # exactly the four classes, as before
    with pytest.raises(ValueError, match=r"choose one of \['gaussian', 'imq', 'laplacian', 'matern', 'additive'\]"):
        kernel.make_kernel("nope")

"""Rules about the repository itself, not about any one feature.

(a) ``dpkme`` is a plain library: importing any of its modules never imports
    streamlit, and no source file mentions an ``import streamlit``.
(b) The app never writes data to disk (uploaded data is private): no file
    writes in ``app.py``, ``pages/`` or any other Streamlit module outside
    ``dpkme/``, ``tests/``, ``benchmarks/``, ``notebooks/``, ``sample_data/`` and ``docs/``.
(c) Every public module ``dpkme/<m>.py`` (or subpackage ``dpkme/<m>/``) is
    imported by a test module under ``tests/``; test modules live in the folder
    of their area (``tests/<area>/test_*.py``, none at the top), and import
    shared helpers from ``tests/support/`` only, never from each other. Private
    modules (``_x``) and ``__main__`` are exempt. ``KNOWN_UNTESTED`` lists
    modules (committed or in progress) that have no test file *yet*: it must
    only shrink, and the lead empties it. A listed module that has gained tests
    only raises a warning, so that adding a test file never breaks CI; remove
    its entry then.
(d) Requirements are pinned exactly (``name==version``), and the environment
    running the tests has exactly those versions.
"""

from __future__ import annotations

import ast
import importlib.metadata
import pkgutil
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = REPO_ROOT / "dpkme"

# Public dpkme modules without tests/test_<module>.py yet. Only ever remove entries.
KNOWN_UNTESTED = frozenset({"reproduce_alg2"})

# Directories whose code never runs inside the app.
NOT_APP_DIRS = {"dpkme", "tests", "benchmarks", "notebooks", "sample_data", "docs", ".venv", "venv", ".git"}


def _public_modules() -> list[str]:
    """Top-level public modules and subpackages of dpkme (``_x`` and __main__ exempt)."""
    return sorted(
        info.name
        for info in pkgutil.iter_modules([str(PACKAGE)])
        if not info.name.startswith("_")
    )


def _all_module_names() -> list[str]:
    """Every importable module of dpkme, private ones and subpackages included."""
    names = ["dpkme"]
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="dpkme."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            names.append(info.name)
    return names


def _py_files(root: Path):
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


# ----------------------------------------------------------------- (a) no streamlit
def test_importing_dpkme_never_imports_streamlit():
    modules = _all_module_names()
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "    assert 'streamlit' not in sys.modules, f'importing {name} imported streamlit'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr


def test_dpkme_sources_never_mention_streamlit_imports():
    pattern = re.compile(r"^\s*(import|from)\s+streamlit\b|import_module\(\s*['\"]streamlit", re.M)
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{path.read_text().count(chr(10), 0, m.start()) + 1}"
        for path in _py_files(PACKAGE)
        for m in pattern.finditer(path.read_text())
    ]
    assert not offenders, f"dpkme must not import streamlit (UI code belongs in pages/): {offenders}"


# --------------------------------------------------------- (b) no writes from the app
def _app_files() -> list[Path]:
    """app.py, pages/ and every other Python file outside the non-app directories."""
    files = []
    for path in _py_files(REPO_ROOT):
        rel = path.relative_to(REPO_ROOT)
        if rel.parts[0] in NOT_APP_DIRS or rel.parts[0].startswith("."):
            continue
        files.append(path)
    return files


# Methods and functions that write to the file or buffer given as first argument
# (pandas' to_* return a string when called without one).
_TO_FILE_METHODS = {
    "to_csv", "to_parquet", "to_excel", "to_pickle", "to_feather", "to_hdf", "to_json",
    "to_stata", "to_orc", "to_html", "to_latex", "to_markdown", "to_xml", "to_sql",
    "tofile", "savefig", "write_image", "write_html", "write_json",
    "save", "savez", "savez_compressed", "savetxt",  # np.save(...) and friends
}
# Calls that always touch the file system (pickle.dump etc. need an open(..., "w")).
_ALWAYS_WRITE = {
    "shutil.copy", "shutil.copy2", "shutil.copyfile",
    "shutil.copyfileobj", "shutil.move", "os.makedirs", "os.mkdir", "os.rename",
    "os.replace", "tempfile.NamedTemporaryFile", "tempfile.TemporaryFile",
    "tempfile.mkstemp", "tempfile.mkdtemp", "tempfile.TemporaryDirectory",
}
_ALWAYS_WRITE_METHODS = {"write_text", "write_bytes", "touch", "mkdir"}
_IN_MEMORY = {"BytesIO", "StringIO", "io.BytesIO", "io.StringIO"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _is_in_memory(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Call) and _dotted(node.func) in _IN_MEMORY


def _first_arg(call: ast.Call, *keywords: str) -> ast.AST | None:
    if call.args:
        return call.args[0]
    for kw in call.keywords:
        if kw.arg in keywords:
            return kw.value
    return None


def _write_mode(call: ast.Call, position: int, computed_is_write: bool) -> bool:
    """Whether the ``mode`` of an open() call (positional index ``position``) writes."""
    mode = call.args[position] if len(call.args) > position else None
    for kw in call.keywords:
        if kw.arg == "mode":
            mode = kw.value
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(set(mode.value) & set("wax+"))
    return computed_is_write


def find_disk_writes(source: str) -> list[tuple[int, str]]:
    """(line, call) of every call in ``source`` that may write to the file system."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else name
        if name in _ALWAYS_WRITE or attr in _ALWAYS_WRITE_METHODS:
            hit = True
        elif name in {"open", "io.open", "gzip.open", "bz2.open", "lzma.open"}:
            hit = _write_mode(node, 1, computed_is_write=True)  # unknown mode: assume a write
        elif attr == "open":  # Path(...).open(mode), Image.open(file) ...
            hit = _write_mode(node, 0, computed_is_write=False)
        elif attr in _TO_FILE_METHODS:
            dest = _first_arg(node, "path_or_buf", "path", "excel_writer", "fname", "file")
            hit = dest is not None and not _is_in_memory(dest) and not (
                isinstance(dest, ast.Constant) and dest.value is None
            ) and not (isinstance(dest, ast.Name) and re.search(r"buf|bio|stream", dest.id, re.I))
        else:
            hit = False
        if hit:
            found.append((node.lineno, ast.unparse(node)[:100]))
    return found


def test_disk_write_detector_catches_the_usual_ways():
    bad = """
df.to_csv("out.csv")
df.to_parquet(Path("x") / "y.parquet")
np.save(f"{name}.npy", arr)
open("private.csv", "w").write(text)
with open(path, mode="ab") as fh: pass
Path("p").write_bytes(data)
tempfile.NamedTemporaryFile(delete=False)
fig.write_image(target)
Path(p).open("w")
"""
    good = """
csv = df.to_csv(index=False)
df.to_csv(io.StringIO())
buf = io.BytesIO(); df.to_parquet(buf); np.save(buf, arr)
with open(path) as fh: pass
text = open(path, "r").read() + Path(p).open().read()
img = Image.open(uploaded_file)
st.download_button("CSV", data=df.to_csv(index=False).encode())
"""
    assert len(find_disk_writes(bad)) == 9, find_disk_writes(bad)
    assert find_disk_writes(good) == []


def test_app_never_writes_data_to_disk():
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {call}"
        for path in _app_files()
        for line, call in find_disk_writes(path.read_text())
    ]
    assert not offenders, (
        "the app may write data to disk (uploaded private data must never be persisted; "
        "build downloads in memory with io.BytesIO/StringIO):\n" + "\n".join(offenders)
    )


# ----------------------------------------------------------- (c) a test per module
def _has_tests(module: str) -> bool:
    """A test module under tests/ imports ``dpkme.<module>`` (or something inside it), or is named after it
    (``dpkme/cli_dpgm.py`` -> ``tests/cli/test_dpgm.py``: the CLI's tests call it through ``dpkme.cli``)."""
    tests = REPO_ROOT / "tests"
    pattern = re.compile(rf"^\s*(from|import) dpkme\.{re.escape(module)}\b", re.M)
    named = {f"{p.parent.name}_{p.stem[len('test_'):]}" for p in tests.rglob("test_*.py")}
    return module in named or any(pattern.search(p.read_text()) for p in tests.rglob("test_*.py"))


def test_every_public_module_has_a_test_file():
    missing = [m for m in _public_modules() if not _has_tests(m) and m not in KNOWN_UNTESTED]
    assert not missing, (
        f"dpkme modules that no test module under tests/ imports: {missing}. Add tests "
        "(do not add them to KNOWN_UNTESTED: that list only shrinks)."
    )
    covered = sorted(m for m in KNOWN_UNTESTED if _has_tests(m))
    if covered:
        warnings.warn(
            f"remove {covered} from KNOWN_UNTESTED in {Path(__file__).name}: they have tests now",
            stacklevel=1,
        )


def test_test_modules_live_in_area_folders_and_share_helpers_through_support():
    tests = REPO_ROOT / "tests"
    top = sorted(p.name for p in tests.glob("test_*.py"))
    assert not top, f"test modules at the top of tests/ (put them in the folder of their area): {top}"
    cross = [
        f"{p.relative_to(tests)}: {m.group(0).strip()}"
        for p in sorted(tests.rglob("test_*.py"))
        for m in re.finditer(r"^\s*(from|import) (tests\.(?!support\b)[\w.]+|test_\w+)", p.read_text(), re.M)
    ]
    assert not cross, "test modules import other test modules (move the helper to tests/support/):\n" + "\n".join(cross)
    for folder in sorted(d for d in tests.iterdir() if d.is_dir() and d.name != "__pycache__"):
        assert (folder / "__init__.py").exists(), f"{folder.relative_to(REPO_ROOT)} has no __init__.py"


# ------------------------------------------------------------- (d) exact pins
REQUIREMENT_FILES = ["requirements.txt", "tests/requirements.txt"]
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==(?P<version>[^\s;=<>!~*,]+)(\s*;.*)?$")


def _pins(rel: str) -> dict[str, str]:
    pins = {}
    for number, raw in enumerate((REPO_ROOT / rel).read_text().splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        match = _PIN.match(line)
        assert match, f"{rel}:{number}: {raw!r} is not pinned exactly as name==version"
        pins[match["name"]] = match["version"]
    return pins


@pytest.mark.parametrize("rel", REQUIREMENT_FILES)
def test_requirements_are_pinned_exactly(rel):
    assert _pins(rel), f"{rel} lists no requirement"


def test_installed_versions_match_the_pins():
    mismatched = []
    for rel in REQUIREMENT_FILES:
        for name, version in _pins(rel).items():
            try:
                installed = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                installed = None
            if installed != version:
                mismatched.append(f"{name}: pinned {version} in {rel}, installed {installed}")
    assert not mismatched, "run `bash tests/run.sh` to sync the environment:\n" + "\n".join(mismatched)


def test_every_page_requires_the_app_frame_first():
    """Each page calls require_frame(__file__) before anything is drawn (deep links: ui/frame.py)."""
    import ast

    for path in sorted((REPO_ROOT / "pages").glob("*.py")):
        tree = ast.parse(path.read_text())
        body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))
                and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]   # docstring
        first = body[0]
        call = first.value if isinstance(first, ast.Expr) else None
        assert isinstance(call, ast.Call) and getattr(call.func, "id", None) == "require_frame", \
            f"{path.name}: the first statement must be require_frame(__file__)"


def test_readme_audit_table_is_the_generated_one():
    """The audit page's table (docs/audits.md) is exactly what benchmarks/bench_audit.py writes from its results JSON."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("bench_audit", REPO_ROOT / "benchmarks" / "bench_audit.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    res = json.loads((REPO_ROOT / "benchmarks" / "results" / "audit.json").read_text())
    readme = bench.README.read_text()   # docs/audits.md, where the tables moved from README.md in 0.5.0
    i, j = readme.index(bench.README_START) + len(bench.README_START), readme.index(bench.README_END)
    assert readme[i:j].strip() == "\n".join(bench.audit_table_lines(res["audits"])).strip()
    # every mechanism of the library is in it, and every deliberately broken variant is refuted
    from dpkme.audit import AUDITS
    rows = res["audits"]["rows"]
    assert {r["mechanism"] for r in rows} == set(AUDITS)
    assert all(r["passed"] == (r["variant"] == "correct") for r in rows)


def test_readme_links_point_to_files_that_exist():
    """Every relative link or image in README.md (screenshots, results, notebooks) names a file in the repo."""
    readme = (REPO_ROOT / "README.md").read_text()
    targets = {t for t in re.findall(r"\]\(([^)#\s]+)\)", readme) if "://" not in t}
    assert any(t.startswith("docs/screenshots/") for t in targets)
    missing = sorted(t for t in targets if not (REPO_ROOT / t).exists())
    assert not missing, missing
    # the screenshots come from the browser tests (the main flow, the five-minute path), which retake every one
    flow = "\n".join(p.read_text() for p in sorted((REPO_ROOT / "tests" / "browser").glob("test_*.py")))
    for t in targets:
        if t.startswith("docs/screenshots/") and t.endswith(".png"):
            assert f'screenshot(page, "{Path(t).stem}")' in flow, t

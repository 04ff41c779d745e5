#!/usr/bin/env bash
# Peers of benchmarks/bench_adaptive_peers.py (issue 25), for that benchmark ONLY (never runtime dependencies):
#  - benchmarks/.peer-venv/mbi2: a venv with mbi 2.0.0 (AIM and MST as published in mbi 2.0) and the data
#    packages, seeing dpkme's .venv (same jax, optax, numpy, pandas, scikit-learn) through a .pth file;
#  - benchmarks/.peer-venv/snsynth: smartnoise-synth 1.0.8's MST on mbi 1.1.0 (it needs mbi<2), a --target
#    folder put first on sys.path only by the benchmark's MST worker subprocess.
# Both under benchmarks/.peer-venv/ (git-ignored). Every install is --no-deps from exact pins (PyPI only).
# Usage: benchmarks/setup_peers_mbi2.sh   (DPKME_VENV=DIR: dpkme's venv, default .venv at the repo root)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
base="${DPKME_VENV:-$root/.venv}"
venv="$here/.peer-venv/mbi2"
"$base/bin/python" -m venv "$venv"
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$base/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/dpkme-base.pth"
echo "$root" >> "$site/dpkme-base.pth"
"$venv/bin/pip" install --no-deps -r "$here/requirements-peers-mbi2.txt"
"$venv/bin/pip" install --no-deps --target "$here/.peer-venv/snsynth" -r "$here/requirements-peers-snsynth.txt"
JAX_PLATFORMS=cpu "$venv/bin/python" -W ignore -c \
    "import mbi, dpkme, sklearn, vega_datasets, statsmodels.datasets; print('mbi', mbi.__file__)"
JAX_PLATFORMS=cpu PYTHONPATH="$here/.peer-venv/snsynth" "$venv/bin/python" -W ignore -c \
    "import snsynth.mst, mbi; print('snsynth MST on', mbi.__file__)"
echo "run: $venv/bin/python $here/bench_adaptive_peers.py"

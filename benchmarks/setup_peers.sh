#!/usr/bin/env bash
# Create benchmarks/.peer-venv for benchmarks/bench_tabular.py: dpkme's runtime requirements plus the
# peer synthesizers (AIM, MST from smartnoise-synth on mbi/JAX, CPU only) and the data packages,
# installed with --no-deps from the exact pins of requirements-peers.txt (notes on what failed there).
# Usage: benchmarks/setup_peers.sh   (PYTHON=python3.11 picks the interpreter, Python 3.11 needed;
# PEER_VENV=DIR puts the environment elsewhere)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${PEER_VENV:-$here/.peer-venv}"
"${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/pip" install -r "$here/../requirements.txt"
"$venv/bin/pip" install --no-deps -r "$here/requirements-peers.txt"
JAX_PLATFORMS=cpu "$venv/bin/python" -W ignore -c \
    "import snsynth.aim, snsynth.mst, mbi, sklearn, vega_datasets, statsmodels.datasets; print('peer venv ready')"
echo "run: $venv/bin/python $here/bench_tabular.py --quick"

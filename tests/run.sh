#!/usr/bin/env bash
# Set up a machine and run the whole test suite (browser tests included):
#
#     bash tests/run.sh [pytest args...]     e.g.  bash tests/run.sh -m "not browser" -x
#                                                  bash tests/run.sh -n 0 -x tests/data/test_io.py   (serial)
#
# 1. creates .venv with python3 -m venv if missing (PYTHON=... picks another interpreter);
# 2. pip-installs requirements.txt + tests/requirements.txt into it (a no-op when satisfied;
#    -qq: pip errors are shown, its warnings and progress are not);
# 3. installs Debian's chromium + fonts-liberation with apt-get if /usr/bin/chromium is
#    missing (as root, else with sudo); if that is impossible it FAILS: a skipped browser
#    suite must never look green. Never `playwright install` (no browser downloads here);
# 4. runs pytest over tests/ with the options of pytest.ini, in parallel with pytest-xdist:
#    -n <one worker per CPU that nproc reports, at most 4; serial on one CPU> and
#    --dist loadfile (a module runs on one worker, in order, as serially: see
#    tests/conftest.py). "$@" comes after those options, so a later -n or --dist wins:
#    -n 0 runs serially in this process. Every test runs, slow ones included
#    (-m "not slow" is for developers in a hurry).
#
# Works from any directory. DPKME_SIMULATE_NO_CHROMIUM=1 exercises step 3 as on a machine
# without chromium, with `apt-get -s` (a simulation that changes nothing), then stops.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

log() { printf '[tests/run.sh] %s\n' "$*" >&2; }
die() { printf '[tests/run.sh] ERROR: %s\n' "$*" >&2; exit 1; }

CHROMIUM=/usr/bin/chromium
APT_PACKAGES=(chromium fonts-liberation)
simulate=${DPKME_SIMULATE_NO_CHROMIUM:-0}

# --- 1-2. virtual environment and Python packages ---------------------------------
if [ "$simulate" != 1 ]; then
  if [ ! -x .venv/bin/python ]; then
    log "creating .venv with ${PYTHON:-python3} ($("${PYTHON:-python3}" --version 2>&1))"
    "${PYTHON:-python3}" -m venv .venv
  fi
  log "pip install -r requirements.txt -r tests/requirements.txt"
  .venv/bin/python -m pip install --quiet --quiet --progress-bar off \
    -r requirements.txt -r tests/requirements.txt \
    || die "pip install failed (see the errors above)"
  # the library itself, editable (its pinned dependencies are installed above): the tests import the
  # installed package, and the `dpkme` console command exists
  log "pip install --no-deps -e ."
  .venv/bin/python -m pip install --quiet --quiet --progress-bar off --no-deps -e . \
    || die "pip install -e . failed (see the errors above)"
fi

# --- 3. the browser ----------------------------------------------------------------
if [ "$simulate" = 1 ] || [ ! -x "$CHROMIUM" ]; then
  log "$CHROMIUM is missing: installing ${APT_PACKAGES[*]} with apt-get"
  if [ "$(id -u)" -eq 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    die "$CHROMIUM is missing and cannot be installed: not root and no password-less sudo.
  Install it:  sudo apt-get install -y --no-install-recommends ${APT_PACKAGES[*]}
  The browser tests are part of the suite; they are never skipped."
  fi
  apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300)
  if [ "$simulate" = 1 ]; then
    # Same commands, but apt-get -s (changes nothing) and no update (it cannot simulate).
    log "SIMULATION (DPKME_SIMULATE_NO_CHROMIUM=1): apt-get -s, nothing is changed"
    apt+=(-s) install_out=/dev/stdout
    APT_PACKAGES+=(--reinstall)
  else
    install_out=/dev/null
    "${apt[@]}" update -qq || die "apt-get update failed"
  fi
  "${apt[@]}" install -y -qq --no-install-recommends "${APT_PACKAGES[@]}" >"$install_out" \
    || die "apt-get install ${APT_PACKAGES[*]} failed"
  if [ "$simulate" = 1 ]; then
    log "simulation done"
    exit 0
  fi
  [ -x "$CHROMIUM" ] || die "apt-get succeeded but $CHROMIUM is still missing"
fi
version=$("$CHROMIUM" --version 2>/dev/null) || die "$CHROMIUM does not run"
log "browser: $version"

# --- 4. the tests --------------------------------------------------------------------
# nproc counts the CPUs this process may use (not psutil's physical cores, which is 1 on a
# 2-vCPU machine with hyper-threading). Beyond 4 workers the longest modules (the AppTest
# fuzzer, the browser flow: ~1 min each) are the critical path and more workers only cost
# memory. --no-loadscope-reorder keeps the modules in file order, which hands out those
# long modules (test_app_*, test_browser_*) first instead of last.
cpus=$(nproc 2>/dev/null || echo 1)
workers=$(( cpus > 4 ? 4 : cpus ))
[ "$workers" -ge 2 ] || workers=0
PARALLEL=(-n "$workers" --dist loadfile --no-loadscope-reorder)
log "python -m pytest -q ${PARALLEL[*]} $*"
exec .venv/bin/python -m pytest -q "${PARALLEL[@]}" "$@"

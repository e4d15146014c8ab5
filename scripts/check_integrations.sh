#!/usr/bin/env bash
# Runs the RLlib and AgileRL recipes of docs/integrations.md, each in a virtual environment of
# its own: both libraries are large and pin older versions of our dependencies (ray[rllib]
# pins gymnasium 1.2.2, agilerl pins pettingzoo < 1.27), so they stay out of the dev extra and CI.
#
#   bash scripts/check_integrations.sh [rllib] [agilerl]     # default: both
#
# VENV_DIR (default: a temporary folder, removed at the end) keeps the environments between
# runs. Prints one "recipe NAME: ok|FAILED" line per recipe and exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
keep=${VENV_DIR:-}
base=${VENV_DIR:-$(mktemp -d)}
[ -n "$keep" ] || trap 'rm -rf "$base"' EXIT
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(rllib agilerl)

# The pinned versions these recipes were checked with (docs/integrations.md says the same).
declare -A install=(
  [rllib]='ray[rllib]==2.60.0'
  [agilerl]='agilerl==2.58.0 peft==0.21.0'
)

extract() {  # the recipe's code block from the page
  python3 - "$1" <<'PY'
import re, sys
page = open("docs/integrations.md").read()
blocks = dict(re.findall(r"<!-- recipe: ([\w-]+) -->\n```python\n(.*?)^```", page, re.S | re.M))
sys.stdout.write(blocks[sys.argv[1]])
PY
}

failed=0
for name in "${names[@]}"; do
  spec=${install[$name]:-}
  [ -n "$spec" ] || { echo "unknown recipe $name (rllib, agilerl)" >&2; exit 2; }
  venv="$base/venv-$name"
  log="$base/$name.log"
  echo "== $name: $spec (venv $venv)"
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  # torch first keeps the CPU build; then the library with its own pins, then this package,
  # whose looser requirements pip meets with what is installed (so the library's pins stay:
  # what a user of both gets); pettingzoo comes with it where the library lacks it (RLlib).
  if ! { "$venv/bin/pip" install -q torch==2.13.0 && "$venv/bin/pip" install -q $spec \
         && "$venv/bin/pip" install -q -e "$root"; } >"$log" 2>&1; then
    echo "recipe $name: FAILED (install; see $log)"; tail -5 "$log"; failed=1; continue
  fi
  "$venv/bin/pip" list 2>/dev/null | grep -iE '^(gymnasium|pettingzoo|numpy|torch|ray|agilerl) ' | tr -s ' ' | sed 's/^/   /'
  extract "$name" > "$base/recipe_$name.py"  # (not $name.py: that would shadow the library)
  if (cd "$base" && RAY_DISABLE_USAGE_STATS=1 timeout 1200 "$venv/bin/python" "recipe_$name.py") >>"$log" 2>&1; then
    echo "recipe $name: ok ($(grep -v '^\s*$' "$log" | tail -1 | cut -c1-200))"
  else
    echo "recipe $name: FAILED (see $log)"; tail -15 "$log"; failed=1
  fi
done
exit $failed

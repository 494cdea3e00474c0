#!/usr/bin/env bash
# Runs the shell steps of the workflow users copy (docs/github-actions-check.yml) as GitHub
# Actions would, in a scratch "user repository" whose .retrylab is this checkout: once on
# models that pass (exit 0 expected) and once on a model with a wrong expectation (exit 1
# expected); each time the report must be there. Seconds, once the release build exists.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
workflow="$root/docs/github-actions-check.yml"

# The `env:` block at the top level: KEY: value lines, as exports.
env_lines=$(awk '
  /^env:/ { on = 1; next }
  on && /^[^ ]/ { on = 0 }
  on && /^  [A-Z_]+:/ {
    key = $1; sub(":", "", key)
    value = $0; sub(/^  [A-Z_]+: */, "", value); sub(/ +#.*$/, "", value)
    printf "export %s=%s\n", key, value
  }' "$workflow")
# Each `run: |` block, dedented, in order.
steps=$(awk '
  /^ *run: \|/ { match($0, /^ */); indent = RLENGTH + 2; on = 1; next }
  on {
    match($0, /^ */)
    if ($0 !~ /^ *$/ && RLENGTH < indent) { on = 0 }
    else { print substr($0, indent + 1); next }
  }' "$workflow")
n_steps=$(grep -c '^ *run: |' "$workflow")
if [ "$n_steps" -lt 2 ] || [ -z "$steps" ]; then
  echo "workflow-steps: expected the build and check steps in $workflow, found $n_steps" >&2
  exit 1
fi
if grep -Eq '^ *run: [^|]' "$workflow"; then
  echo "workflow-steps: keep every shell step of $workflow in a 'run: |' block" >&2
  exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# One run of the steps in a fresh repository holding the models `$@`; prints the exit code.
run_steps() {
  local repo="$scratch/repo$1"
  shift
  mkdir -p "$repo/models"
  ln -s "$root" "$repo/.retrylab"
  cp "$@" "$repo/models/"
  printf '%s\n' "$env_lines" "$steps" > "$repo/steps.sh"
  # GitHub runs each step with `bash -e`; the steps here run in one shell, in order.
  (cd "$repo" && bash -e steps.sh > output.txt 2>&1) && echo 0 || echo $?
}

expect() {
  local want=$1 got=$2 repo=$3 what=$4
  if [ "$got" != "$want" ]; then
    echo "workflow-steps: $what: exit $got, expected $want" >&2
    cat "$repo/output.txt" >&2
    exit 1
  fi
  for f in check.txt junit.xml; do
    if [ ! -s "$repo/retrylab-report/$f" ]; then
      echo "workflow-steps: $what: no retrylab-report/$f" >&2
      exit 1
    fi
  done
  echo "workflow-steps: $what: exit $got, report kept"
}

got=$(run_steps 1 "$root/models/ticket_lost_response.json" "$root/models/windows/genuine_repeat.json")
expect 0 "$got" "$scratch/repo1" "models that pass"

# The same model expecting same_key to violate no_duplicate, which it never does.
wrong="$scratch/wrong_expectation.json"
sed 's/"same_key": {$/"same_key": { "violate": ["no_duplicate"],/' \
  "$root/models/ticket_lost_response.json" > "$wrong"
sed -i 's/"hold": \["no_duplicate", /"hold": [/' "$wrong"
if cmp -s "$wrong" "$root/models/ticket_lost_response.json"; then
  echo "workflow-steps: could not make the wrong expectation" >&2
  exit 1
fi
got=$(run_steps 2 "$wrong")
expect 1 "$got" "$scratch/repo2" "a wrong expectation"
grep -q '<failure message="FAIL ticket_lost_response same_key' "$scratch/repo2/retrylab-report/junit.xml"

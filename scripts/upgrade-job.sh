#!/usr/bin/env bash
# The workflow's upgrade job, step by step: the same script runs on GitHub's runners and in a test here
# (scripts/upgrade-job.test.ts runs its gate against the shipped upgrade bundles).
#
#   scripts/upgrade-job.sh run FROM TO MODE RUN_ID   every topic on a fresh FROM cluster, the upgrade to TO under
#                                                    load, every topic again, the rollback, every topic again:
#                                                    one bundle, results/RUN_ID/MODE (its after-upgrade/ and
#                                                    after-rollback/ inside). DRY_RUN=1 prints the command only.
#   scripts/upgrade-job.sh gate BUNDLE               is this upgrade safe? `datapath-conformance upgrade BUNDLE`:
#                                                    its markdown to stdout and to $GITHUB_STEP_SUMMARY when set, one
#                                                    annotation line (::error:: broke, ::warning:: held with known
#                                                    issues new on the target, ::notice:: held); exit 1 when broken
#                                                    (STRICT=1: also on a new known issue).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  sed -n '4,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

case "${1:-}" in
  run)
    [ $# -eq 5 ] || usage
    from=$2 to=$3 mode=$4 run_id=$5
    cmd=(env "CLUSTER_PROVIDER=${CLUSTER_PROVIDER:-kind}" "CILIUM_VERSION=$from" "UPGRADE_TO=$to" ROLLBACK=1
      "CONFORMANCE_MODE=$mode" "RUN_ID=$run_id" npm run test:conformance)
    if [ "${DRY_RUN:-}" = 1 ]; then
      printf '%s\n' "${cmd[*]}"
      exit 0
    fi
    cd "$here" && "${cmd[@]}"
    ;;
  gate)
    [ $# -eq 2 ] || usage
    bundle=$2
    args=(upgrade "$bundle")
    [ "${STRICT:-}" = 1 ] && args+=(--strict)
    out=$(node "$here/bin/datapath-conformance.mjs" "${args[@]}" 2>&1)
    code=$?
    printf '%s\n' "$out"
    [ -n "${GITHUB_STEP_SUMMARY:-}" ] && printf '%s\n\n' "$out" >>"$GITHUB_STEP_SUMMARY"
    # the verdict line (### Upgrade …: HELD/BROKEN), or the command's own one-line error
    head=$(printf '%s\n' "$out" | grep -m1 '^### Upgrade' | sed 's/^### //')
    [ -n "$head" ] || head=$(printf '%s\n' "$out" | tail -n 1)
    if [ "$code" -ne 0 ]; then
      echo "::error title=upgrade::$head"
    elif printf '%s' "$head" | grep -q 'known issue'; then
      echo "::warning title=upgrade::$head"
    else
      echo "::notice title=upgrade::$head"
    fi
    exit "$code"
    ;;
  *) usage ;;
esac

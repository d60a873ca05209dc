#!/usr/bin/env bash
# The workflow's upgrade job, step by step: the same script runs on GitHub's runners and in a test here
# (scripts/upgrade-job.test.ts runs its gate against the shipped upgrade bundles).
#
#   scripts/upgrade-job.sh run FROM TO MODE RUN_ID   every topic on a fresh FROM cluster, the upgrade to TO under
#                                                    load, every topic again, the rollback, every topic again:
#                                                    one bundle, results/RUN_ID/MODE (its after-upgrade/ and
#                                                    after-rollback/ inside). DRY_RUN=1 prints the command only.
#   scripts/upgrade-job.sh gate BUNDLE               is this upgrade safe? `datapath-conformance upgrade BUNDLE
#                                                    --markdown`: one word (HELD, BROKEN, REGRESSED, INCONCLUSIVE),
#                                                    its markdown to stdout and (the command writes it) to
#                                                    $GITHUB_STEP_SUMMARY when set, one annotation line (::error::
#                                                    not held, ::warning:: held with known issues accepted,
#                                                    ::notice:: held); exit 1 unless held (ALLOW_KNOWN=1: accept
#                                                    known issues new on the target).
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
    args=(upgrade "$bundle" --markdown)
    [ "${ALLOW_KNOWN:-}" = 1 ] && args+=(--allow-known)
    # the command appends its markdown (or its refusal, escaped as markdown) to the summary itself: this script
    # never copies a program's output into markdown, where a bundle's string quoted in an error line would be
    # HTML, a mention or a comment hiding the rest (issue 45)
    summary=${GITHUB_STEP_SUMMARY:-}
    [ -n "$summary" ] && args+=(--step-summary "$summary")
    size_before=$( { [ -n "$summary" ] && wc -c <"$summary"; } 2>/dev/null || echo 0)
    # the command writes the annotation itself (GITHUB_ACTIONS=true: error when broken or refused, warning when
    # held with new known issues, notice when held), its data escaped as the runner's toolkit escapes it; no line
    # of a bundle's can start with `::` (cli/print.ts), so the annotation is the only line that does
    out=$(GITHUB_ACTIONS=true node "$here/bin/datapath-conformance.mjs" "${args[@]}" 2>&1)
    code=$?
    printf '%s\n' "$out"
    # a command that ended without a word of its own (node missing, killed): the job still says it failed
    if [ "$code" -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^::error '; then
      echo "::error title=upgrade::the upgrade command exited $code without a verdict (the step's log has its output)"
    fi
    # a command that wrote nothing to the summary (node missing, killed): this script's own words, none of its output
    size_after=$( { [ -n "$summary" ] && wc -c <"$summary"; } 2>/dev/null || echo 0)
    if [ -n "$summary" ] && [ "$code" -ne 0 ] && [ "$size_after" = "$size_before" ]; then
      printf '**The upgrade gate** ended with exit %d without a verdict: the step'"'"'s log has its output.\n\n' "$code" >>"$summary"
    fi
    exit "$code"
    ;;
  *) usage ;;
esac

#!/usr/bin/env bash
# Wrapper for running dragnet from cron: plain timestamped log lines (no progress bars without a
# TTY), the crawl lock respected, and exit codes passed through so cron's mail/monitoring can act.
#
# usage: dragnet-cron.sh CRAWL_DIR [dragnet subcommand and args, default: cycle]
#
#   DRAGNET   the dragnet binary (default: dragnet on PATH)
#
# By default it runs one cycle (`dragnet cycle CRAWL_DIR`), which also refreshes
# CRAWL_DIR/metrics.prom for node_exporter's textfile collector. Any other subcommand can be
# wrapped the same way (`dragnet-cron.sh DIR status`); the crawl directory always goes last.
#
# The lock: a run that finds another one working on the crawl exits 2 with an "already running"
# line and changes nothing. A lock left by a run that died (same host, pid gone) is never cleared
# here, since clearing locks automatically is how two cycles end up running over each other; the
# log says so, with the command that clears it. Exit codes: 0 done, 1 finished with recorded
# per-item failures, 2 usage/configuration/lock error, 3 I/O failure or corrupt data.
set -uo pipefail
dir=${1:?usage: dragnet-cron.sh CRAWL_DIR [SUBCOMMAND ARGS...]}
shift
bin=${DRAGNET:-dragnet}
cmd=("$@")
[ ${#cmd[@]} -eq 0 ] && cmd=(cycle)
log() { printf '%s dragnet-cron[%d]: %s\n' "$(date -u +%FT%TZ)" "$$" "$*"; }

# dragnet's stderr goes to our stderr as it comes (cron logs stay live) and to a file, so the
# lock error can be recognised afterwards.
errs=$(mktemp "${TMPDIR:-/tmp}/dragnet-cron.XXXXXX") || { log "cannot create a temporary file"; exit 3; }
trap 'rm -f "$errs"' EXIT
log "start: $bin ${cmd[*]} $dir"
{ "$bin" "${cmd[@]}" "$dir" 2>&1 1>&3 3>&- | tee "$errs" >&2; } 3>&1
rc=${PIPESTATUS[0]}

case $rc in
  0) log "done" ;;
  1) log "finished with recorded per-item failures (exit 1)" ;;
  2)
    if grep -q 'is already running' "$errs"; then
      log "already running: another dragnet holds the lock of $dir; this run did nothing (exit 2)"
    elif grep -q 'has a stale lock' "$errs"; then
      log "stale lock: the run that held $dir is gone; if no other dragnet works on it, clear it with \`$bin unlock $dir\` and re-run (exit 2)"
    elif grep -q 'a local `dragnet cycle` runs the crawl' "$errs"; then
      log "a local dragnet cycle holds the lock of $dir: nothing was submitted to Slurm (exit 2)"
    elif grep -q 'still queued or running' "$errs"; then
      log "still running on Slurm: the jobs submitted before for $dir are in the queue; this run did nothing (exit 2)"
    elif grep -q 'locked by .* on another host' "$errs"; then
      log "locked from another host: if that run is gone, clear it with \`$bin unlock --force $dir\` (exit 2)"
    else
      log "usage or configuration error (exit 2): see the message above"
    fi
    ;;
  3) log "I/O failure or corrupt data (exit 3): committed data is intact; fix and re-run" ;;
  *) log "failed with exit $rc" ;;
esac
exit "$rc"

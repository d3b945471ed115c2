#!/usr/bin/env bash
# Wrapper for running dragnet from cron: plain timestamped log lines (no progress bars without a
# TTY), the crawl lock respected, and exit codes passed through so cron's mail/monitoring can act.
#
# usage: dragnet-cron.sh CRAWL_DIR [dragnet subcommand and args, default: status]
#
# Until `dragnet cycle` exists this wrapper runs the given subcommand (default `status`); once it
# does, the default becomes one cycle. A second run while one holds the lock exits 2 with
# "already running"; a stale lock is reported with the command that clears it.
set -uo pipefail
dir=${1:?usage: dragnet-cron.sh CRAWL_DIR [SUBCOMMAND ARGS...]}
shift
bin=${DRAGNET:-dragnet}
cmd=("$@")
[ ${#cmd[@]} -eq 0 ] && cmd=(status)
log() { printf '%s dragnet-cron[%d]: %s\n' "$(date -u +%FT%TZ)" "$$" "$*"; }
log "start: $bin ${cmd[*]} $dir"
"$bin" "${cmd[@]}" "$dir"
rc=$?
case $rc in
  0) log "done" ;;
  1) log "finished with recorded per-item failures (exit 1)" ;;
  2) log "usage, configuration or lock error (exit 2): see the message above" ;;
  3) log "I/O failure or corrupt data (exit 3): committed data is intact; fix and re-run" ;;
  *) log "failed with exit $rc" ;;
esac
exit $rc

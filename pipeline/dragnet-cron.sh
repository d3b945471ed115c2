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
# The wrapper decides by dragnet's exit code alone, never by its wording (dragnet's own
# message, passed through above the wrapper's line, says the details):
#   0 done; 1 finished with recorded per-item failures; 2 usage or configuration error;
#   3 I/O failure or corrupt data (committed data intact); 4 a cycle finished with failed
#   partitions (the others' work kept; the next run retries what is missing); 5 busy: another
#   run holds the lock (here, on another host, or a Slurm chain still queued), nothing done;
#   130/143 stopped by SIGINT/SIGTERM (a shutdown): nothing more committed, temporaries and the
#   lock cleared; the next run resumes.
# A run that died (kill -9, OOM, reboot) needs no one: its OS lock died with it, so the next
# night's `dragnet cycle` takes its lock over (and says so, "took over the lock of ...") and
# resumes from the last committed stage. The wrapper never clears locks itself.
set -uo pipefail
dir=${1:?usage: dragnet-cron.sh CRAWL_DIR [SUBCOMMAND ARGS...]}
shift
bin=${DRAGNET:-dragnet}
cmd=("$@")
[ ${#cmd[@]} -eq 0 ] && cmd=(cycle)
log() { printf '%s dragnet-cron[%d]: %s\n' "$(date -u +%FT%TZ)" "$$" "$*"; }

log "start: $bin ${cmd[*]} $dir"
"$bin" "${cmd[@]}" "$dir"
rc=$?

case $rc in
  0) log "done" ;;
  1) log "finished with recorded per-item failures (exit 1)" ;;
  2) log "usage or configuration error (exit 2): see the message above" ;;
  3) log "I/O failure or corrupt data (exit 3): committed data is intact; fix and re-run" ;;
  4) log "the cycle finished with failed partitions (exit 4): the others' work is kept; \`$bin status $dir\` lists the failures, and the next run retries them" ;;
  5) log "busy (exit 5): another run works on $dir (its lock, or its Slurm jobs still queued); this run did nothing" ;;
  130|143) log "stopped by a signal (exit $rc: SIGINT 130, SIGTERM 143): nothing more was committed; the next run resumes where it stopped" ;;
  *) log "failed with exit $rc" ;;
esac
exit "$rc"

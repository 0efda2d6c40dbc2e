# tftrain replica supervisor: runs one replica's command and ends it with the run.
# POSIX sh (dash, busybox ash, bash): it runs in whatever image the stack names.
#
#   sh supervise.sh --ends-run|--follows-run --marker FILE --run KEY [--stop-grace S] -- CMD...
#
# --ends-run     the chief (or worker 0 without a chief): when CMD exits 0, publish FILE
#                containing KEY (written to a temp file, then renamed: never half-written).
# --follows-run  every other replica: once FILE holds KEY, stop CMD (SIGTERM, then SIGKILL
#                after --stop-grace seconds, default 2) and exit 0.
# Either way: FILE already holding KEY at start means the run has ended, so exit 0 at
# once; a FILE holding another key (an earlier run) is ignored. SIGTERM/SIGINT are
# forwarded to CMD, and the exit status is CMD's (128+N if a signal ended it), except a
# follower stopped by the run's end, which exits 0. Usage errors exit 2.
# A run that cannot succeed: when any replica's CMD exits 2, 126 or 127 (final: a retry
# fails the same way), its supervisor writes "KEY failed ..." to FILE, and every other
# replica's supervisor stops its CMD and exits 2 too, so every Job fails at once instead of
# serving until a deadline. Only a failure written after this supervisor started counts:
# a new attempt of the run (a new `pulumi up`) is not ended by the last attempt's failure.
# See infra/lifecycle/__init__.py for why, and README "Lifecycle".

say() { printf 'tftrain-supervise: %s\n' "$*" >&2; }

usage() {
    say "$1"
    say "usage: supervise.sh --ends-run|--follows-run --marker FILE --run KEY [--stop-grace S] -- CMD [ARG...]"
    exit 2
}

role='' marker='' run='' grace=2
while [ "$#" -gt 0 ]; do
    case $1 in
    --ends-run) role=ends ;;
    --follows-run) role=follows ;;
    --marker | --run | --stop-grace)
        [ "$#" -ge 2 ] || usage "$1 needs a value"
        case $1 in
        --marker) marker=$2 ;;
        --run) run=$2 ;;
        --stop-grace) grace=$2 ;;
        esac
        shift
        ;;
    --) shift; break ;;
    *) usage "unknown option $1" ;;
    esac
    shift
done
[ -n "$role" ] || usage "--ends-run or --follows-run is required"
[ -n "$marker" ] && [ -n "$run" ] || usage "--marker and --run are required"
[ "$#" -gt 0 ] || usage "no command after --"
case $grace in '' | *[!0-9]*) usage "--stop-grace must be whole seconds" ;; esac

# Fractions work with GNU and busybox sleep, else 1 s. No output: a sleep that outlives
# the watcher must not hold the replica's stdout/stderr open.
nap() { sleep "$1" >/dev/null 2>&1 || sleep 1 >/dev/null 2>&1; }

marker_line() {
    first=''
    { IFS= read -r first <"$marker"; } 2>/dev/null
    printf '%s' "$first"
}

run_ended() { [ "$(marker_line)" = "$run" ]; }

# A failure of this run written after `at_start` (what FILE held when this shell started).
run_failed() {
    line=$(marker_line)
    case $line in "$run failed "*) [ "$line" != "$at_start" ] ;; *) false ;; esac
}

# write TEXT to FILE atomically: a temp file, then rename.
write_marker() {
    partial="$marker.$$.partial"
    mkdir -p "${marker%/*}" && printf '%s\n' "$1" >"$partial" && mv -f "$partial" "$marker"
}

publish() {
    if write_marker "$run"; then
        say "run $run succeeded: published $marker"
    else
        # The run's result stands; the other replicas then end with their Jobs' deadline.
        say "run $run succeeded, but $marker could not be written: the other replicas keep running"
    fi
}

is_final() { case $1 in 2 | 126 | 127) true ;; *) false ;; esac; }

publish_failure() {
    run_ended && return 0 # the run already succeeded: a late replica's failure changes nothing
    if write_marker "$run failed $1 $(hostname 2>/dev/null || echo "$$") $$"; then
        say "run $run cannot succeed (exit $1): published $marker, the other replicas stop"
    else
        say "run $run cannot succeed (exit $1), but $marker could not be written"
    fi
}

if run_ended; then
    say "run $run has already ended ($marker): nothing to do"
    exit 0
fi
at_start=$(marker_line)
command -v "$1" >/dev/null 2>&1 || {
    say "cannot run $1: command not found"
    publish_failure 127
    exit 127
}

# An asynchronous command ignores SIGINT (POSIX), so SIGINT is passed on as SIGTERM. The
# trap is set first: a signal that comes while the command starts is passed on right after.
child='' signalled=''
trap 'signalled=1; [ -z "$child" ] || kill -TERM "$child" 2>/dev/null' TERM INT
"$@" &
child=$!
[ -z "$signalled" ] || kill -TERM "$child" 2>/dev/null
supervisor=$$

stop_child() {
    kill -TERM "$child" 2>/dev/null
    ticks=$((grace * 10))
    while [ "$ticks" -gt 0 ] && kill -0 "$child" 2>/dev/null; do
        nap 0.1
        ticks=$((ticks - 1))
    done
    kill -KILL "$child" 2>/dev/null
}

# The watcher: a follower's child ends with the run; and if this shell is SIGKILLed (the
# local launcher's parent-death signal reaches only this shell), the child goes with it.
(
    trap - TERM INT
    while kill -0 "$supervisor" 2>/dev/null; do
        if [ "$role" = follows ] && run_ended; then
            say "run $run succeeded: stopping $1 (SIGTERM, SIGKILL after ${grace}s)"
            stop_child
            exit 0
        fi
        if run_failed; then
            say "run $run failed in another replica ($(marker_line)): stopping $1"
            stop_child
            exit 0
        fi
        nap 0.5
    done
    kill -KILL "$child" 2>/dev/null
) &
watcher=$!

while :; do
    wait "$child" 2>/dev/null # dash would print "Terminated" for a signalled child
    status=$?
    # A trapped signal interrupts `wait` (status > 128) while the child still runs.
    kill -0 "$child" 2>/dev/null || break
done
# SIGKILL: a SIGTERM arriving before the watcher has reset the inherited trap is lost.
kill -KILL "$watcher" 2>/dev/null

if run_failed; then
    exit 2 # stopped because another replica failed: this Job fails at once too
fi
if is_final "$status"; then
    publish_failure "$status"
    exit "$status"
fi
if [ "$role" = ends ]; then
    [ "$status" -eq 0 ] && publish
    exit "$status"
fi
run_ended && exit 0
exit "$status"

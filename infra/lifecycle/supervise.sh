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

run_ended() {
    first=''
    { IFS= read -r first <"$marker"; } 2>/dev/null
    [ "$first" = "$run" ]
}

publish() {
    partial="$marker.$$.partial"
    if mkdir -p "${marker%/*}" && printf '%s\n' "$run" >"$partial" && mv -f "$partial" "$marker"; then
        say "run $run succeeded: published $marker"
    else
        # The run's result stands; the other replicas then end with their Jobs' deadline.
        say "run $run succeeded, but $marker could not be written: the other replicas keep running"
    fi
}

if run_ended; then
    say "run $run has already ended ($marker): nothing to do"
    exit 0
fi
command -v "$1" >/dev/null 2>&1 || {
    say "cannot run $1: command not found"
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

if [ "$role" = ends ]; then
    [ "$status" -eq 0 ] && publish
    exit "$status"
fi
run_ended && exit 0
exit "$status"

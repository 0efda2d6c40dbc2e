# tftrain replica supervisor: runs one replica's command and ends it with the run.
# POSIX sh (dash, busybox ash, bash): it runs in whatever image the stack names, as PID 1.
#
#   sh supervise.sh --ends-run|--follows-run --outcomes DIR --run KEY --generation G
#                   --replica NAME [--backoff-limit N] [--stop-grace S] [--on-success FILE]
#                   [--workdir DIR] [--logs DIR [--log-cap BYTES]] -- CMD...
#
# The run's outcome lives in DIR (on the shared volume), as records no replica overwrites:
#   succeeded.KEY           the run succeeded (written by the replica that ends the run)
#   failed.KEY.G            the run cannot succeed in deploy generation G, and why
#   attempts/KEY.G.NAME.N/  attempt N of replica NAME in generation G (claimed by mkdir)
# A record is written under a name unique to this pod and this shell (uname -n is the pod's
# name; $$ is 1 in every container), then renamed into place: never half-written, and two
# replicas publishing at once cannot take each other's temp file.
#
# --ends-run     the chief / master (or worker 0 without one): CMD exiting 0 ends the run
#                successfully: publish succeeded.KEY, then run FILE (--on-success) if given
#                and exit with its status (a failed export is retried as the next attempt).
# --follows-run  every other replica: once the run has succeeded, stop CMD and exit 0,
#                whatever CMD returns when stopped.
# A run fails, in every replica within a second, when a replica's CMD exits
#   - 2, 126 or 127 (final: a usage error, a command that cannot run), on any attempt, or
#   - non-zero on its last attempt (attempt N > --backoff-limit, as its Job allows no more).
# Its supervisor publishes failed.KEY.G; every other replica stops CMD and exits 2, and a
# replica that starts (or restarts) later exits 2 at once. A failure of another generation
# (an earlier deploy of the same run) is ignored. A succeeded run is ended for good: a
# replica started later exits 0 at once (the ends-run one runs FILE again, which is
# idempotent). An attempt ended by SIGTERM (preemption, eviction, a drain: Kubernetes does
# not count those against the Job's backoffLimit either) gives its attempt number back.
# SIGTERM reaches CMD's whole process group (a shell wrapper's children too); SIGKILL
# follows after --stop-grace seconds (default 2), and says so. Usage errors exit 2.
# --workdir DIR  CMD runs in DIR (created, with $HOME and $TMPDIR when set): the replica's
#                writable directory. First, each argument of CMD naming a file of the
#                directory the supervisor started in (the image's WORKDIR) is made absolute,
#                and that directory leads PYTHONPATH, so `python train.py` and `python -m pkg`
#                still find the image's code. See README "What your trainer gets", "Lifecycle".
# --logs DIR     each attempt's output (CMD's stdout and stderr, in order, and this script's
#                lines) is also kept in DIR/KEY.G.NAME.N.log, the log of attempts/KEY.G.NAME.N;
#                it still reaches this script's stdout (kubectl logs). CMD's output is
#                followed by "... ended: exit STATUS", then what this script decided.
#                Bounded: past --log-cap bytes (default 32 MiB) the log is copied to .log.1
#                (replacing an older one) and starts again empty, so an attempt keeps at most
#                about twice the cap, the newest lines always. Best effort: an image without
#                mkfifo or tee, or a log that cannot be written (a full volume), leaves the
#                output on stdout only; the command never waits for the log.

# Also into the attempt's log, once there is one.
log=''
say() {
    printf 'tftrain-supervise: %s\n' "$*" >&2
    [ -z "$log" ] || printf 'tftrain-supervise: %s\n' "$*" >>"$log" 2>/dev/null
}

usage() {
    say "$1"
    say "usage: supervise.sh --ends-run|--follows-run --outcomes DIR --run KEY --generation G --replica NAME [--backoff-limit N] [--stop-grace S] [--on-success FILE] [--workdir DIR] [--logs DIR [--log-cap BYTES]] -- CMD [ARG...]"
    exit 2
}

role='' outcomes='' run='' generation='' replica='' backoff_limit='' grace=2 on_success=''
workdir='' logs='' log_cap=33554432
while [ "$#" -gt 0 ]; do
    case $1 in
    --ends-run) role=ends ;;
    --follows-run) role=follows ;;
    --outcomes | --run | --generation | --replica | --backoff-limit | --stop-grace | --on-success | --workdir | --logs | --log-cap)
        [ "$#" -ge 2 ] || usage "$1 needs a value"
        case $1 in
        --outcomes) outcomes=$2 ;;
        --run) run=$2 ;;
        --generation) generation=$2 ;;
        --replica) replica=$2 ;;
        --backoff-limit) backoff_limit=$2 ;;
        --stop-grace) grace=$2 ;;
        --on-success) on_success=$2 ;;
        --workdir) workdir=$2 ;;
        --logs) logs=$2 ;;
        --log-cap) log_cap=$2 ;;
        esac
        shift
        ;;
    --) shift; break ;;
    *) usage "unknown option $1" ;;
    esac
    shift
done
[ -n "$role" ] || usage "--ends-run or --follows-run is required"
[ -n "$outcomes" ] && [ -n "$run" ] && [ -n "$generation" ] && [ -n "$replica" ] ||
    usage "--outcomes, --run, --generation and --replica are required"
[ "$#" -gt 0 ] || usage "no command after --"
case $grace in '' | *[!0-9]*) usage "--stop-grace must be whole seconds" ;; esac
case $backoff_limit in *[!0-9]*) usage "--backoff-limit must be a whole number" ;; esac
case $log_cap in '' | *[!0-9]*) usage "--log-cap must be a whole number of bytes" ;; esac
case $run$generation$replica in */* | *' '*) usage "--run, --generation and --replica must not contain / or spaces" ;; esac

succeeded="$outcomes/succeeded.$run"
failed="$outcomes/failed.$run.$generation"
host=$(uname -n 2>/dev/null) || host=unknown

# Fractions work with GNU and busybox sleep, else 1 s. No output: a sleep that outlives
# the watcher must not hold the replica's stdout/stderr open.
nap() { sleep "$1" >/dev/null 2>&1 || sleep 1 >/dev/null 2>&1; }

run_succeeded() { [ -e "$succeeded" ]; }
run_failed() { [ -e "$failed" ]; }

# publish FILE TEXT: write TEXT to FILE atomically, under a temp name no other replica uses.
publish() {
    partial="$outcomes/.partial.$host.$$.${1##*/}"
    mkdir -p "$outcomes" 2>/dev/null
    printf '%s\n' "$2" >"$partial" 2>/dev/null && mv -f "$partial" "$1" 2>/dev/null
}

publish_failure() {
    run_succeeded && return 0 # the run already succeeded: a late failure changes nothing
    if publish "$failed" "$replica exit $1 attempt $attempt on $host"; then
        say "run $run cannot succeed ($replica exit $1, $2): published $failed; the other replicas stop"
    else
        say "run $run cannot succeed ($replica exit $1, $2), but $failed could not be written"
    fi
}

after_success() {
    [ "$role" = ends ] && [ -n "$on_success" ] || exit 0
    /bin/sh "$on_success"
    exit $?
}

if run_succeeded; then
    say "run $run has already succeeded ($succeeded): nothing to train"
    after_success
fi
if run_failed; then
    say "run $run has already failed ($(cat "$failed" 2>/dev/null)): exiting"
    exit 2
fi

# Claim this attempt's number: mkdir is atomic, also on NFS, so two attempts never share one.
attempt=1
mkdir -p "$outcomes/attempts" 2>/dev/null
while ! mkdir "$outcomes/attempts/$run.$generation.$replica.$attempt" 2>/dev/null; do
    if [ ! -d "$outcomes/attempts/$run.$generation.$replica.$attempt" ]; then
        say "cannot write to $outcomes: attempts are not counted (only exit 2, 126, 127 end the run)"
        attempt=0
        break
    fi
    attempt=$((attempt + 1))
done
claim="$outcomes/attempts/$run.$generation.$replica.$attempt"
last=''
[ -n "$backoff_limit" ] && [ "$attempt" -gt "$backoff_limit" ] && last=1

# The replica's own writable directory; the code stays where the replica started.
if [ -n "$workdir" ]; then
    if ! mkdir -p -- "$workdir" ${HOME:+"$HOME"} ${TMPDIR:+"$TMPDIR"} 2>/dev/null; then
        say "cannot create $workdir, HOME $HOME or TMPDIR $TMPDIR"
        publish_failure 2 "final"
        exit 2
    fi
    start=$(pwd)
    if [ "$start" != / ]; then
        count=$#
        while [ "$count" -gt 0 ]; do
            arg=$1
            shift
            case $arg in
            /* | -*) ;;
            *) [ -f "$start/$arg" ] && arg="$start/$arg" ;;
            esac
            set -- "$@" "$arg"
            count=$((count - 1))
        done
        PYTHONPATH="$start${PYTHONPATH:+:$PYTHONPATH}"
        export PYTHONPATH
    fi
    cd -- "$workdir" || exit 2
fi

command -v "$1" >/dev/null 2>&1 || {
    say "cannot run $1: command not found"
    publish_failure 127 "final"
    exit 127
}

# SIGTERM goes to this shell's whole process group when this shell leads it (a container's
# PID 1 does; the local launcher starts it as a group leader too), so a shell wrapper's
# children hear it as well; this shell and its watcher ignore the echo. Started inside
# someone else's group, it signals CMD alone. SIGKILL goes to CMD alone: what is left of the
# group dies with this shell (the container, or the launcher, kills the rest).
leads_group() {
    stat=$(cat "/proc/$$/stat" 2>/dev/null) || return 1
    # shellcheck disable=SC2086 # split on purpose: state, ppid, pgrp follow the name
    set -- ${stat##*) }
    [ "$3" = "$$" ]
}
term_target=''
leads_group && term_target=0
terminate() { kill -TERM "${term_target:-$child}" 2>/dev/null; }

# The attempt's log: CMD writes into a FIFO whose reader (the copier) copies to this script's
# stdout and appends to the log. The copier ignores SIGTERM and SIGINT (it must copy what CMD
# prints while it stops), and if its tee dies, a read loop takes over the FIFO, so CMD never
# gets SIGPIPE nor waits on a full pipe. CMD's status is still its own (no pipeline).
fifo='' copier=''
start_log() {
    [ -n "$logs" ] && [ "$attempt" -gt 0 ] || return 1
    if ! command -v mkfifo >/dev/null 2>&1 || ! command -v tee >/dev/null 2>&1; then
        say "no mkfifo or tee in this image: the output is not kept in $logs"
        return 1
    fi
    fifo="${TMPDIR:-/tmp}/.tftrain-output.$host.$$"
    rm -f "$fifo" 2>/dev/null
    log="$logs/$run.$generation.$replica.$attempt.log"
    if ! { mkdir -p "$logs" && : >>"$log"; } 2>/dev/null || [ ! -f "$log" ] ||
        ! mkfifo "$fifo" 2>/dev/null; then
        log=''
        say "cannot write $logs or $fifo: the output is not kept"
        return 1
    fi
    # shellcheck disable=SC2094 # the FIFO's name goes once both ends are open
    (
        trap '' TERM INT
        rm -f "$fifo"
        tee -a "$log" 2>/dev/null && exit 0
        while IFS= read -r line || [ -n "$line" ]; do printf '%s\n' "$line"; done
    ) <"$fifo" &
    copier=$!
}

# Called every half second: past the cap, the log is copied to .log.1 and emptied (tee
# appends, so it carries on at the start); lines written during the copy may be lost.
cap_log() {
    [ -n "$log" ] || return 0
    size=$(wc -c <"$log" 2>/dev/null) || return 0
    [ $((size)) -le "$log_cap" ] && return 0
    cp "$log" "$log.1" 2>/dev/null
    : >"$log" 2>/dev/null
}

# The copier has up to a second to copy CMD's last lines (a child of CMD may hold the FIFO).
end_log() {
    [ -n "$copier" ] || return 0
    ticks=10
    while [ "$ticks" -gt 0 ] && kill -0 "$copier" 2>/dev/null; do
        nap 0.1
        ticks=$((ticks - 1))
    done
    # On a line of its own, also after output that did not end with one.
    [ -z "$(tail -c 1 "$log" 2>/dev/null)" ] || printf '\n' >>"$log" 2>/dev/null
    printf 'tftrain-supervise: %s attempt %s ended: exit %s\n' "$replica" "$attempt" "$1" >>"$log" 2>/dev/null
}

# An asynchronous command ignores SIGINT (POSIX), so SIGINT is passed on as SIGTERM. The trap
# is set first: a signal that comes while the command starts is passed on right after.
child='' signalled=''
# shellcheck disable=SC2329 # called by the trap below
on_signal() {
    [ -z "$signalled" ] || return 0
    signalled=1
    [ -z "$child" ] || terminate
}
trap on_signal TERM INT
if start_log; then
    "$@" >"$fifo" 2>&1 &
else
    "$@" &
fi
child=$!
[ -z "$signalled" ] || terminate
supervisor=$$

# From the watcher: SIGTERM goes through this shell's trap, so the command hears it once,
# however many reasons there are to stop it.
stop_child() {
    kill -TERM "$supervisor" 2>/dev/null
    ticks=$((grace * 10))
    while [ "$ticks" -gt 0 ] && kill -0 "$child" 2>/dev/null; do
        nap 0.1
        ticks=$((ticks - 1))
    done
    if kill -0 "$child" 2>/dev/null; then
        say "$1 did not stop within ${grace}s of SIGTERM: SIGKILL"
        kill -KILL "$child" 2>/dev/null
    fi
}

# The watcher: a follower's command ends with the run's success, every command with the
# run's failure; and if this shell is SIGKILLed (the local launcher's parent-death signal
# reaches only this shell), the command goes with it. Started from a command substitution,
# it is no job of this shell, so no shell reports its end ("Killed") when it is stopped.
watcher=$(
    (
        trap '' TERM
        while kill -0 "$supervisor" 2>/dev/null; do
            if [ "$role" = follows ] && run_succeeded; then
                say "run $run succeeded: stopping $1 (SIGTERM, SIGKILL after ${grace}s)"
                stop_child "$1"
                exit 0
            fi
            if run_failed; then
                say "run $run failed in another replica ($(cat "$failed" 2>/dev/null)): stopping $1"
                stop_child "$1"
                exit 0
            fi
            cap_log
            nap 0.5
        done
        kill -KILL "$child" 2>/dev/null
    ) >/dev/null &
    echo "$!"
)

while :; do
    wait "$child" 2>/dev/null # dash would print "Terminated" for a signalled child
    status=$?
    # A trapped signal interrupts `wait` (status > 128) while the child still runs.
    kill -0 "$child" 2>/dev/null || break
done
# SIGKILL: the watcher ignores SIGTERM.
kill -KILL "$watcher" 2>/dev/null
end_log "$status"

# The run's success first: whatever a stopped follower's command returned, it is done.
if run_succeeded && [ "$role" = follows ]; then
    exit 0
fi
if [ "$role" = ends ] && [ "$status" -eq 0 ]; then
    if publish "$succeeded" "$run $replica attempt $attempt on $host"; then
        say "run $run succeeded: published $succeeded"
    else
        # The run's result stands; the other replicas then end with their Jobs' deadline.
        say "run $run succeeded, but $succeeded could not be written: the other replicas keep running"
    fi
    after_success
fi
if run_failed; then
    exit 2 # stopped because another replica failed: this Job fails at once too
fi
if [ -n "$signalled" ] && [ "$status" -ne 0 ]; then
    # Preempted or deleted: not a failure of the replica, so the next attempt keeps this number.
    [ "$attempt" -gt 0 ] && rmdir "$claim" 2>/dev/null
    exit "$status"
fi
case $status in
0) ;;
2 | 126 | 127) publish_failure "$status" "final" ;;
*) [ -z "$last" ] || publish_failure "$status" "attempt $attempt, its last of $((backoff_limit + 1))" ;;
esac
exit "$status"

# tftrain replica supervisor: runs one replica's command and ends it with the run.
# POSIX sh (dash, busybox ash, bash): it runs in whatever image the stack names, as PID 1.
#
#   sh supervise.sh --ends-run|--follows-run --outcomes DIR --run KEY --generation G
#                   --replica NAME [--backoff-limit N] [--stop-grace S] [--finish-grace S]
#                   [--peers "NAME..."] [--lost-after S] [--on-success FILE]
#                   [--await "NAME..."] [--await-limit S] [--workdir DIR]
#                   [--logs DIR [--log-cap BYTES]] -- CMD...
#
# The run's outcome lives in DIR (on the shared volume), as records no replica overwrites:
#   succeeded.KEY           the run succeeded (written by the replica that ends the run)
#   failed.KEY.G            the run cannot succeed in deploy generation G, and why:
#                           "<replica> exit <code> attempt <n> on <host>", or
#                           "<replica> lost attempt <n> on <host>: ..." (no heartbeat)
#   attempts/KEY.G.NAME.N/  attempt N of replica NAME in generation G (claimed by mkdir), with
#     start                 when it started: the writer's clock (date +%s)
#     beat                  the attempt's heartbeat: the writer's clock (date +%s), every
#                           --lost-after/6 s (at least 1 s) while its supervisor lives,
#                           rewritten in place (same length: no new block on a full volume)
#     exit                  written once the attempt has ended: "<status> <how>", status being
#                           this script's exit status, how: exited (its command ended),
#                           run-ended (stopped by the run's success or failure), given-back
#                           (told to stop from outside: not counted against --backoff-limit)
#     term                  written when the attempt receives SIGTERM/SIGINT from outside
#     reserve               64 KiB this attempt frees when a record cannot be written (a log
#                           filled the volume), so the outcome is recorded whatever the logs did
# A record is written under a name unique to this pod and this shell (uname -n is the pod's
# name; $$ is 1 in every container), then renamed into place: never half-written, and two
# replicas publishing at once cannot take each other's temp file. Records are only ever
# looked up by name and read whole (no directory listing, no attribute times): on NFS a
# lookup and an open revalidate with the server (close-to-open; docs/lifecycle.md "Lifecycle").
#
# --ends-run     the chief / master (or worker 0 without one): CMD exiting 0 ends the run
#                successfully: publish succeeded.KEY, wait for the --await replicas' last
#                attempts to end (at most --await-limit s), then run FILE (--on-success) if
#                given and exit with its status (a failed export is retried as the next attempt).
# --follows-run  every other replica: once the run has succeeded, stop CMD (after letting it
#                finish by itself for up to --finish-grace s) and exit 0, whatever CMD returns.
# A run fails, in every replica within a second, when a replica's CMD exits
#   - one of FINAL_EXIT_CODES (a usage error, a command that cannot run), on any attempt, or
#   - non-zero on its last attempt (attempt N > --backoff-limit, as its Job allows no more),
# and within --lost-after s (+ one heartbeat) when a replica of --peers on its last attempt
# stops beating without a word (its container was killed whole: a group OOM kill, node loss).
# The supervisor that sees it publishes failed.KEY.G; every other replica stops CMD and exits
# 2, and a replica that starts (or restarts) later exits 2 at once. A failure of another
# generation (an earlier deploy of the same run) is ignored. A succeeded run is ended for
# good: a replica started later exits 0 at once (the ends-run one runs FILE again, which is
# idempotent).
# An attempt told to stop from outside (SIGTERM or SIGINT: preemption, eviction, a drain, a
# deleted pod; Kubernetes does not count those against the Job's backoffLimit either) is
# given back: it keeps its number (its log is its own) but does not count against
# --backoff-limit, and it never publishes the run's success: it exits with CMD's status, or
# 143 (128 + SIGTERM) if CMD exited 0, so that its Job is not complete and runs it again.
# SIGTERM reaches CMD's whole process group (a shell wrapper's children too), and the
# supervisor waits while any process of that group is still running: up to --stop-grace s
# (default 2) when the run ended, then SIGKILL, said; as long as the platform allows (the
# pod's terminationGracePeriodSeconds, the launcher's --stop-grace) when told from outside.
# Usage errors exit 2.
# --workdir DIR  CMD runs in DIR (created, with $HOME and $TMPDIR when set): the replica's
#                writable directory. First, each argument of CMD naming a file of the
#                directory the supervisor started in (the image's WORKDIR) is made absolute,
#                and that directory leads PYTHONPATH, so `python train.py` and `python -m pkg`
#                still find the image's code. See docs/trainer.md "What your trainer gets", "Lifecycle".
# --logs DIR     each attempt's output (CMD's stdout and stderr, in order, and this script's
#                lines) is also kept in DIR/KEY.G.NAME.N.log, the log of attempts/KEY.G.NAME.N;
#                it still reaches this script's stdout (kubectl logs). CMD's output is
#                followed by "... ended: exit STATUS" (this script's exit status, with CMD's
#                own when it differs), then what this script decided.
#                Bounded: the copier itself moves the log to .log.1 (replacing an older one)
#                once it has written --log-cap bytes (default 32 MiB) into it, and carries on
#                in a new one: no byte is lost, an attempt keeps at most twice the cap (plus
#                4 KiB), the newest output always; a line may be split between the two.
#                Best effort: an image without mkfifo, tee or dd, or a log that cannot be
#                written (a full volume), leaves the output on stdout only; the command
#                never waits for the log, and the records are written anyway (reserve).

# Exit codes no retry can fix: a usage error (argparse's and the trainer's), a command that
# is not executable (126) or not found (127). infra/lifecycle reads this line: one definition.
FINAL_EXIT_CODES='2 126 127'

# Also into the attempt's log, once there is one.
log=''
say() {
    printf 'tftrain-supervise: %s\n' "$*" >&2
    [ -z "$log" ] || printf 'tftrain-supervise: %s\n' "$*" >>"$log" 2>/dev/null
}

usage() {
    say "$1"
    say "usage: supervise.sh --ends-run|--follows-run --outcomes DIR --run KEY --generation G --replica NAME [--backoff-limit N] [--stop-grace S] [--finish-grace S] [--peers NAMES] [--lost-after S] [--on-success FILE] [--await NAMES] [--await-limit S] [--workdir DIR] [--logs DIR [--log-cap BYTES]] -- CMD [ARG...]"
    exit 2
}

role='' outcomes='' run='' generation='' replica='' backoff_limit='' grace=2 on_success=''
workdir='' finish_grace=0 peers='' lost_after=30 awaited='' await_limit=0 logs='' log_cap=33554432
while [ "$#" -gt 0 ]; do
    case $1 in
    --ends-run) role=ends ;;
    --follows-run) role=follows ;;
    --outcomes | --run | --generation | --replica | --backoff-limit | --stop-grace | \
        --finish-grace | --peers | --lost-after | --on-success | --await | --await-limit | \
        --workdir | --logs | --log-cap)
        [ "$#" -ge 2 ] || usage "$1 needs a value"
        case $1 in
        --outcomes) outcomes=$2 ;;
        --run) run=$2 ;;
        --generation) generation=$2 ;;
        --replica) replica=$2 ;;
        --backoff-limit) backoff_limit=$2 ;;
        --stop-grace) grace=$2 ;;
        --finish-grace) finish_grace=$2 ;;
        --peers) peers=$2 ;;
        --lost-after) lost_after=$2 ;;
        --on-success) on_success=$2 ;;
        --await) awaited=$2 ;;
        --await-limit) await_limit=$2 ;;
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
for seconds in "$grace" "$finish_grace" "$lost_after" "$await_limit"; do
    case $seconds in '' | *[!0-9]*) usage "--stop-grace, --finish-grace, --lost-after and --await-limit must be whole seconds" ;; esac
done
[ "$lost_after" -gt 0 ] || usage "--lost-after must be at least 1"
case $backoff_limit in *[!0-9]*) usage "--backoff-limit must be a whole number" ;; esac
case $log_cap in '' | *[!0-9]*) usage "--log-cap must be a whole number of bytes" ;; esac
case $run$generation$replica$peers$awaited in */*) usage "--run, --generation, --replica, --peers and --await must not contain /" ;; esac
case $run$generation$replica in *' '*) usage "--run, --generation and --replica must not contain spaces" ;; esac

succeeded="$outcomes/succeeded.$run"
failed="$outcomes/failed.$run.$generation"
attempts="$outcomes/attempts"
host=$(uname -n 2>/dev/null) || host=unknown
# The heartbeat's period: six beats fit in --lost-after, so a few slow writes are no loss.
beat_every=$((lost_after / 6))
[ "$beat_every" -ge 1 ] || beat_every=1

# Fractions work with GNU and busybox sleep, else 1 s. No output: a sleep that outlives
# the watcher must not hold the replica's stdout/stderr open. Waits for an end (a stopped
# command, the copier, the watcher) look every 0.05 s: they are short, a look is cheap (a few
# ms for a /proc scan), and each is on the path of the run's end, which a user waits for.
nap() { sleep "$1" >/dev/null 2>&1 || sleep 1 >/dev/null 2>&1; }
now() { date +%s 2>/dev/null; }

run_succeeded() { [ -e "$succeeded" ]; }
run_failed() { [ -e "$failed" ]; }
is_final() { case " $FINAL_EXIT_CODES " in *" $1 "*) return 0 ;; esac; return 1; }

# put FILE TEXT: TEXT into FILE. On a full volume (a log filled it), once more after this
# attempt has freed its reserve: a record is never lost to a log. A failed write leaves no
# empty file behind.
reserve=''
put() {
    printf '%s\n' "$2" >"$1" 2>/dev/null && return 0
    [ -n "$reserve" ] || { rm -f "$1" 2>/dev/null; return 1; }
    rm -f "$reserve" 2>/dev/null
    reserve=''
    printf '%s\n' "$2" >"$1" 2>/dev/null && return 0
    rm -f "$1" 2>/dev/null
    return 1
}

# publish FILE TEXT: write TEXT to FILE atomically, under a temp name no other replica uses.
publish() {
    partial="$outcomes/.partial.$host.$$.${1##*/}"
    mkdir -p "$outcomes" 2>/dev/null
    put "$partial" "$2" && mv -f "$partial" "$1" 2>/dev/null
}

# publish_failure TEXT WHY: the run's failure, unless it has already succeeded (a late
# failure changes nothing then) or failed (the first failure is the run's: it stays).
publish_failure() {
    run_succeeded && return 0
    if run_failed; then
        say "run $run cannot succeed ($2); it had already failed ($(cat "$failed" 2>/dev/null))"
        return 0
    fi
    if publish "$failed" "$1"; then
        say "run $run cannot succeed ($2): published $failed; the other replicas stop"
    else
        say "run $run cannot succeed ($2), but $failed could not be written"
    fi
}

exit_failure() { publish_failure "$replica exit $1 attempt $attempt on $host" "$replica exit $1, $2"; }

# The latest attempt of replica $1 in this generation (0: none yet). Attempt numbers are
# claimed in order and never given back (a given-back attempt keeps its claim), so they
# have no gaps; each probe is one lookup of a name.
latest_attempt() {
    n=0
    while [ -d "$attempts/$run.$generation.$1.$((n + 1))" ]; do n=$((n + 1)); done
    echo "$n"
}

# Whether attempt $2 of replica $1 was given back (told to stop from outside): its exit says
# so, or it was told and never said how it ended (its grace ran out).
given_back() {
    how=''
    [ -e "$attempts/$run.$generation.$1.$2/exit" ] || {
        [ -e "$attempts/$run.$generation.$1.$2/term" ]
        return
    }
    read -r _ how <"$attempts/$run.$generation.$1.$2/exit" 2>/dev/null
    [ "$how" = given-back ]
}

# How many attempts of replica $1 before attempt $2 count against --backoff-limit.
counted_before() {
    k=1 counted=0
    while [ "$k" -lt "$2" ]; do
        given_back "$1" "$k" || counted=$((counted + 1))
        k=$((k + 1))
    done
    echo "$counted"
}

# An attempt that ended, or was told to stop, has said so; one that has not, is on its
# replica's last attempt and has not beaten for --lost-after s is gone without a word.
check_peers() {
    [ -n "$backoff_limit" ] || return 0
    clock=$(now) || return 0
    for peer in $peers; do
        [ "$peer" != "$replica" ] || continue
        n=$(latest_attempt "$peer")
        [ "$n" -gt 0 ] && [ "$(counted_before "$peer" "$n")" -ge "$backoff_limit" ] || continue
        dir="$attempts/$run.$generation.$peer.$n"
        [ -e "$dir/exit" ] || [ -e "$dir/term" ] && continue
        beat=$(cat "$dir/beat" 2>/dev/null) || continue
        case $beat in '' | *[!0-9]*) continue ;; esac
        [ "$((clock - beat))" -gt "$lost_after" ] || continue
        publish_failure "$peer lost attempt $n on $host: no heartbeat for $((clock - beat))s on its last attempt (killed with its container: an OOM group kill, a lost node)" \
            "$peer lost on its last attempt: no heartbeat for $((clock - beat))s"
        return 0
    done
}

# Attempt records: written only when this attempt has a claim.
note() { [ "$attempt" -gt 0 ] && put "$claim/$1" "$2"; }
# The heartbeat, overwritten in place: the same length every time, so no new block is needed
# on a full volume.
beat() { [ "$attempt" -gt 0 ] && printf '%s\n' "$(now)" 1<>"$claim/beat" 2>/dev/null; }

finish_attempt() { note exit "$1 $2"; }

after_success() {
    [ "$role" = ends ] && [ -n "$on_success" ] || exit 0
    await_replicas
    /bin/sh "$on_success"
    exit $?
}

# The --await replicas (the evaluator) may still be scoring the final checkpoint: the export
# waits until their latest attempt has ended, or for --await-limit s.
await_replicas() {
    [ -n "$awaited" ] || return 0
    waited=0
    for name in $awaited; do
        while [ "$waited" -lt "$((await_limit * 5))" ]; do
            n=$(latest_attempt "$name")
            [ "$n" -eq 0 ] || [ -e "$attempts/$run.$generation.$name.$n/exit" ] && break
            [ "$waited" -gt 0 ] || say "waiting for $name to finish (up to ${await_limit}s)"
            nap 0.2
            waited=$((waited + 1))
        done
    done
}

# An asynchronous command ignores SIGINT (POSIX), so SIGINT is passed on as SIGTERM. The trap
# is set before anything else happens: a signal that comes while the replica starts (as PID
# 1, one without a trap would be ignored) is passed on as soon as the command runs.
child='' signalled='' watcher='' attempt=0 term_target=''
# shellcheck disable=SC2329 # called by the trap below
on_signal() {
    [ -z "$signalled" ] || return 0
    signalled=1
    # Said at once, for the other replicas: this attempt is stopping, it is not lost.
    note term "signalled"
    [ -z "$child" ] || terminate
}
trap on_signal TERM INT

if run_succeeded; then
    say "run $run has already succeeded ($succeeded): nothing to train"
    after_success
fi
if run_failed; then
    say "run $run has already failed ($(cat "$failed" 2>/dev/null)): exiting"
    exit 2
fi
trap 'rm -f "$reserve" 2>/dev/null' EXIT

# Claim this attempt's number: mkdir is atomic, also on NFS, so two attempts never share one.
attempt=1
mkdir -p "$attempts" 2>/dev/null
while ! mkdir "$attempts/$run.$generation.$replica.$attempt" 2>/dev/null; do
    if [ ! -d "$attempts/$run.$generation.$replica.$attempt" ]; then
        say "cannot write to $outcomes: attempts are not counted (only exit $FINAL_EXIT_CODES end the run)"
        attempt=0
        break
    fi
    attempt=$((attempt + 1))
done
claim="$attempts/$run.$generation.$replica.$attempt"
note start "$(now)"
beat
# 64 KiB of zeros, freed when a record cannot be written (see put).
if [ "$attempt" -gt 0 ] && head -c 65536 /dev/zero >"$claim/reserve" 2>/dev/null; then
    reserve="$claim/reserve"
else
    rm -f "$claim/reserve" 2>/dev/null
fi
# The last attempt the Job allows: given-back attempts do not count (podFailurePolicy).
last=''
[ -n "$backoff_limit" ] && [ "$attempt" -gt 0 ] &&
    [ "$(counted_before "$replica" "$attempt")" -ge "$backoff_limit" ] && last=1

# The replica's own writable directory; the code stays where the replica started.
if [ -n "$workdir" ]; then
    if ! mkdir -p -- "$workdir" ${HOME:+"$HOME"} ${TMPDIR:+"$TMPDIR"} 2>/dev/null; then
        say "cannot create $workdir, HOME $HOME or TMPDIR $TMPDIR"
        exit_failure 2 "final"
        finish_attempt 2 exited
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
    exit_failure 127 "final"
    finish_attempt 127 exited
    exit 127
}

# SIGTERM goes to this shell's whole process group when this shell leads it (a container's
# PID 1 does; the local launcher starts it as a group leader too), so a shell wrapper's
# children hear it as well; this shell and its watcher ignore the echo. Started inside
# someone else's group, it signals CMD alone.
stat_of() { read -r stat 2>/dev/null <"/proc/$1/stat"; }
alive() {
    stat_of "$1" || return 1
    state=${stat##*) }
    [ "${state%% *}" != Z ]
}
leads_group() {
    stat_of $$ || return 1
    # shellcheck disable=SC2086 # split on purpose: state, ppid, pgrp follow the name
    set -- ${stat##*) }
    [ "$3" = "$$" ]
}
leads_group && term_target=0
# A command just forked may still be this shell's copy, whose trap would swallow the signal:
# wait (up to a second) until it runs its own program. Without cmp, it is sent at once.
terminate() {
    tries=0
    while cmp -s "/proc/$$/cmdline" "/proc/$child/cmdline" 2>/dev/null && [ "$tries" -lt 20 ]; do
        nap 0.05
        tries=$((tries + 1))
    done
    kill -TERM "${term_target:-$child}" 2>/dev/null
}

# The processes of CMD still running: CMD, or, when this shell leads the group, every
# process of it but this shell, the watcher and their own helpers (a nap, a command
# substitution). A trainer that a dying wrapper left to this shell (PID 1 adopts orphans)
# still counts.
busy() {
    if [ -z "$term_target" ]; then
        kill -0 "$child" 2>/dev/null && echo "$child"
        return 0
    fi
    stat_of self && helper=${stat%% *}
    for entry in /proc/[0-9]*; do
        stat_of "${entry#/proc/}" || continue
        pid=${stat%% *} name=${stat#*\(}
        name=${name%\)*}
        # shellcheck disable=SC2086 # split on purpose, as in leads_group
        set -- ${stat##*) }
        [ "$3" = "$$" ] && [ "$1" != Z ] || continue
        case $pid in "$$" | "$helper" | "${watcher:-}" | "${copier:-}") continue ;; esac
        # The watcher's and the log copier's own helpers (a nap; dd, tee, wc) are not CMD's.
        [ "$pid" != "$child" ] && [ "$2" = "${watcher:-}" ] && continue
        [ "$pid" != "$child" ] && [ -n "$copier" ] && copies "$2" && continue
        [ "$pid" != "$child" ] && [ "$2" = "$$" ] && [ "$name" = sleep ] && continue
        echo "$pid"
    done
}

# Whether process $1 is the copier or one of its children (a chunk's command substitution).
copies() {
    [ "$1" = "$copier" ] && return 0
    stat_of "$1" || return 1
    # shellcheck disable=SC2086 # split on purpose, as in leads_group
    set -- ${stat##*) }
    [ "$2" = "$copier" ]
}

# The attempt's log: CMD writes into a FIFO whose reader (the copier) copies to this script's
# stdout and appends to the log, chunk by chunk: dd reads at most the cap's rest (in reads of
# at most 4 KiB, never more: dd has no read-ahead, unlike busybox's head), tee writes it to
# the log and to stdout, wc counts it. Once the log holds --log-cap bytes the copier moves it
# to .log.1 and the next chunk starts a new one: nothing is lost between the two. The copier
# ignores SIGTERM and SIGINT (it must copy what CMD prints while it stops) and SIGPIPE (a
# stdout nobody reads any more); if a chunk's copy breaks, cat drains the FIFO, so CMD never
# gets SIGPIPE nor waits on a full pipe. CMD's status is still its own (no pipeline).
fifo='' copier=''
start_log() {
    [ -n "$logs" ] && [ "$attempt" -gt 0 ] || return 1
    for tool in mkfifo tee dd wc; do
        command -v "$tool" >/dev/null 2>&1 && continue
        say "no $tool in this image: the output is not kept in $logs"
        return 1
    done
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
        trap '' TERM INT PIPE
        rm -f "$fifo"
        written=0
        while :; do
            left=$((log_cap - written))
            blocks=$(((left + 4095) / 4096))
            [ "$blocks" -le 256 ] || blocks=256
            [ "$blocks" -ge 1 ] || blocks=1
            copied=$(dd bs=4096 count="$blocks" 2>/dev/null | tee -a "$log" /dev/fd/3 2>/dev/null | wc -c)
            # Nothing read: every writer has closed the FIFO, or the copy broke (cat below).
            [ "$((copied))" -gt 0 ] || break
            written=$((written + copied))
            if [ "$written" -ge "$log_cap" ]; then
                mv -f "$log" "$log.1" 2>/dev/null
                written=0
            fi
        done 3>&1
        cat 2>/dev/null || cat >/dev/null 2>&1
    ) <"$fifo" &
    copier=$!
}

# The copier has up to a second to copy CMD's last lines (a child of CMD may hold the FIFO).
# $1: this attempt's exit status; $2: CMD's, and why they differ (empty: they do not).
end_log() {
    [ -n "$copier" ] || return 0
    ticks=20
    while [ "$ticks" -gt 0 ] && kill -0 "$copier" 2>/dev/null; do
        nap 0.05
        ticks=$((ticks - 1))
    done
    # On a line of its own, also after output that did not end with one.
    [ -z "$(tail -c 1 "$log" 2>/dev/null)" ] || printf '\n' >>"$log" 2>/dev/null
    printf 'tftrain-supervise: %s attempt %s ended: exit %s%s\n' "$replica" "$attempt" "$1" \
        "${2:+ ($2)}" >>"$log" 2>/dev/null
}

# The one place CMD starts: its output through the attempt's log when there is one.
if start_log; then
    "$@" >"$fifo" 2>&1 &
else
    "$@" &
fi
child=$!
[ -z "$signalled" ] || terminate
supervisor=$$

# From the watcher: SIGTERM goes through this shell's trap, so the command hears it once,
# however many reasons there are to stop it; then up to --stop-grace s for the whole group.
stop_child() {
    kill -TERM "$supervisor" 2>/dev/null
    ticks=$((grace * 20))
    while [ "$ticks" -gt 0 ] && [ -n "$(busy)" ]; do
        nap 0.05
        ticks=$((ticks - 1))
    done
    left=$(busy)
    if [ -n "$left" ]; then
        say "$1 did not stop within ${grace}s of SIGTERM: SIGKILL"
        # shellcheck disable=SC2086 # one pid per word
        kill -KILL $left 2>/dev/null
    fi
}

# The watcher: beats for this attempt, ends a follower's command with the run's success
# (after --finish-grace), every command with the run's failure, judges the peers' heartbeats;
# and if this shell is SIGKILLed (the local launcher's parent-death signal reaches only this
# shell), the command's whole group goes with it. Started from a command substitution, it is no job of this
# shell, so no shell reports its end ("Killed") when it is stopped.
watcher=$(
    (
        trap '' TERM INT
        stat_of self && watcher=${stat%% *}
        tick=0 finishing=0
        while kill -0 "$supervisor" 2>/dev/null; do
            if [ "$role" = follows ] && run_succeeded; then
                if [ "$finishing" -eq 0 ] && [ "$finish_grace" -gt 0 ]; then
                    say "run $run succeeded: $1 may finish by itself (up to ${finish_grace}s, then SIGTERM)"
                fi
                finishing=$((finishing + 1))
                if [ "$finishing" -gt "$((finish_grace * 2))" ]; then
                    say "run $run succeeded: stopping $1 (SIGTERM, SIGKILL after ${grace}s)"
                    stop_child "$1"
                    exit 0
                fi
            fi
            if run_failed; then
                say "run $run failed in another replica ($(cat "$failed" 2>/dev/null)): stopping $1"
                stop_child "$1"
                exit 0
            fi
            if [ "$((tick % (beat_every * 2)))" -eq 0 ]; then
                beat
                check_peers
            fi
            tick=$((tick + 1))
            nap 0.5
        done
        # This shell was killed (the launcher's death signal): nothing of the replica may
        # outlive it, not even what a wrapper started. The group is this replica's own when
        # this shell leads it; the watcher goes with it.
        kill -KILL "${term_target:-$child}" 2>/dev/null
    ) >/dev/null &
    echo "$!"
)

while :; do
    wait "$child" 2>/dev/null # dash would print "Terminated" for a signalled child
    status=$?
    # A trapped signal interrupts `wait` (status > 128) while the child still runs.
    kill -0 "$child" 2>/dev/null || break
done
if [ "$status" -gt 128 ]; then
    # The child may have ended between the interrupted `wait` and the check: its own status
    # is still held by this shell (dash, busybox; bash answers 127 for one already reported).
    wait "$child" 2>/dev/null
    again=$?
    [ "$again" -eq 127 ] || status=$again
fi
if [ -n "$signalled" ]; then
    # The group heard SIGTERM: its other processes (a wrapper's trainer saving a checkpoint)
    # get their time. When the run ended, the watcher bounds it with --stop-grace and exits;
    # told from outside, the platform bounds it (the pod's grace, the launcher's).
    while { run_succeeded || run_failed; } && alive "$watcher"; do
        nap 0.05
    done
    while [ -n "$(busy)" ]; do nap 0.05; done
fi
# SIGKILL: the watcher ignores SIGTERM.
kill -KILL "$watcher" 2>/dev/null

# How this attempt ends, one truth for its log, its exit record and this script's status.
command_status=$status how=exited
if run_succeeded && [ "$role" = follows ]; then
    # The run's success first: whatever a stopped follower's command returned, it is done.
    status=0 how=run-ended
elif run_failed && { [ -n "$signalled" ] || [ "$status" -eq 0 ]; }; then
    # Stopped because another replica failed, or done after it had: this Job fails at once
    # too. A command that failed by itself keeps its own end: it was not stopped.
    status=2 how=run-ended
elif [ -n "$signalled" ]; then
    # Preempted or deleted: not the run's end and not a failure of the replica. Given back,
    # and an exit 0 after the signal (a trainer's graceful shutdown) must not complete the
    # Job: the work is not done.
    how=given-back
    [ "$status" -ne 0 ] || status=143
fi
case $how in
exited) why='' ;;
run-ended)
    why="its command: exit $command_status; stopped at the run's end"
    [ -n "$signalled" ] || why="its command: exit $command_status, after the run's end"
    ;;
*) why="its command: exit $command_status; given back: told to stop from outside, not counted against the backoff limit" ;;
esac
[ "$status" -ne "$command_status" ] || [ "$how" = given-back ] || why=''
end_log "$status" "$why"
finish_attempt "$status" "$how"
[ "$how" = exited ] || exit "$status"
if [ "$role" = ends ] && [ "$status" -eq 0 ]; then
    if publish "$succeeded" "$run $replica attempt $attempt on $host"; then
        say "run $run succeeded: published $succeeded"
    else
        # The run's result stands; the other replicas then end with their Jobs' deadline.
        say "run $run succeeded, but $succeeded could not be written: the other replicas keep running"
    fi
    after_success
fi
if [ "$status" -ne 0 ]; then
    if is_final "$status"; then
        exit_failure "$status" "final"
    elif [ -n "$last" ]; then
        exit_failure "$status" "attempt $attempt, its last of $((backoff_limit + 1))"
    fi
fi
exit "$status"

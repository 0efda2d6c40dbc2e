# tftrain export: copy a succeeded run's output to the export target, complete or not at all.
# POSIX sh (dash, busybox ash, bash) and POSIX utilities only (cp, mkdir, mv, rm, find, sed,
# grep, wc, date): it runs in whatever image the stack names, from supervise.sh --on-success.
#
# Reads from the environment:
#   TFTRAIN_OUTPUT_DIR   the run's output (<volume>/<job>/<runId>), required
#   TFTRAIN_EXPORT_DIR   the export root (the bucket's export prefix, or a local dir), required
#   TFTRAIN_JOB_NAME     default: the output dir's parent's name
#   TFTRAIN_RUN_ID       default: the output dir's name
#   TFTRAIN_STACK        optional, recorded in the manifest
#   TFTRAIN_IMAGES       optional, "<replica type>=<image> ...", recorded in the manifest
#
# Writes $TFTRAIN_EXPORT_DIR/<job>/<runId>/:
#   everything under the output dir except the supervisor's and trainer's bookkeeping
#   (top-level names starting with .tftrain) and the replicas' homes (caches: of
#   replicas/<replica>/ only work/, what the replica wrote to its working directory, and
#   logs/, its attempts' output so far), then
#   tftrain-run.json      run id, job, stack, images, and the final metrics the trainer
#                         wrote to <output>/metrics.txt ("<name> <number>" per line), then,
#   _TFTRAIN_EXPORTED     last: the marker, listing every exported file and its size.
# A reader trusts the directory only once the marker is there. The marker is written under
# another name and renamed: on OSS a rename is a server-side copy, which makes the marker
# object appear whole or not at all, while the files before it need no rename.
#
# Idempotent: with the marker there, nothing is done. A directory without it is what an
# earlier, interrupted export left: it is removed and the copy starts again. Exit status:
# 0 exported (or already exported); 2 the environment is incomplete; 1 a copy failed (the
# supervisor exits with it, so the Job retries the export as its next attempt).

say() { printf 'tftrain-export: %s\n' "$*" >&2; }

MARKER=_TFTRAIN_EXPORTED
MANIFEST=tftrain-run.json

src=${TFTRAIN_OUTPUT_DIR%/}
root=${TFTRAIN_EXPORT_DIR%/}
[ -n "$src" ] && [ -n "$root" ] || {
    say "TFTRAIN_OUTPUT_DIR and TFTRAIN_EXPORT_DIR must both be set"
    exit 2
}
[ -d "$src" ] || {
    say "output dir $src does not exist: nothing to export"
    exit 2
}
run=${TFTRAIN_RUN_ID:-${src##*/}}
parent=${src%/*}
job=${TFTRAIN_JOB_NAME:-${parent##*/}}
case $run$job in */* | '' | *' '*) say "job name and run id must be non-empty names, got '$job' '$run'"; exit 2 ;; esac
dest="$root/$job/$run"

if [ -e "$dest/$MARKER" ]; then
    say "run $run is already exported to $dest"
    exit 0
fi
if [ -e "$dest" ]; then
    say "$dest has no $MARKER (an interrupted export): copying again"
    rm -rf "$dest" || { say "cannot remove the partial export $dest"; exit 1; }
fi
mkdir -p "$dest" || { say "cannot create $dest"; exit 1; }

# Every top-level entry, dot-files too, but not the run's bookkeeping.
for entry in "$src"/* "$src"/.[!.]* "$src"/..?*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue # an unmatched pattern stays as it is
    case ${entry##*/} in
    .tftrain*) continue ;;
    replicas)
        for kept in "$entry"/*/work "$entry"/*/logs; do
            [ -d "$kept" ] || continue
            own=${kept%/*}
            if ! { mkdir -p "$dest/replicas/${own##*/}" && cp -R "$kept" "$dest/replicas/${own##*/}/"; }; then
                say "cannot copy $kept to $dest"
                exit 1
            fi
        done
        continue
        ;;
    esac
    cp -R "$entry" "$dest/" || { say "cannot copy $entry to $dest"; exit 1; }
done

# A JSON string: backslash and double quote escaped, control characters dropped.
json_string() {
    printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed 's/[\\"]/\\&/g')"
}

# The trainer's final metrics: "<name> <number>" lines; anything else is left out.
metrics_json() {
    sep=''
    [ -f "$src/metrics.txt" ] || return 0
    while read -r name value rest; do
        [ -z "$rest" ] || continue
        printf '%s\n' "$name" | grep -Eq '^[A-Za-z_][A-Za-z0-9_.-]*$' || continue
        printf '%s\n' "$value" | grep -Eq '^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$' || continue
        printf '%s%s: %s' "$sep" "$(json_string "$name")" "$value"
        sep=', '
    done <"$src/metrics.txt"
}

images_json() {
    sep=''
    for pair in ${TFTRAIN_IMAGES:-}; do
        case $pair in *=*) ;; *) continue ;; esac
        printf '%s%s: %s' "$sep" "$(json_string "${pair%%=*}")" "$(json_string "${pair#*=}")"
        sep=', '
    done
}

exported_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
{
    printf '{\n'
    printf '  "runId": %s,\n' "$(json_string "$run")"
    printf '  "job": %s,\n' "$(json_string "$job")"
    printf '  "stack": %s,\n' "$(json_string "${TFTRAIN_STACK:-}")"
    printf '  "images": {%s},\n' "$(images_json)"
    printf '  "metrics": {%s},\n' "$(metrics_json)"
    printf '  "exportedAt": %s\n' "$(json_string "$exported_at")"
    printf '}\n'
} >"$dest/$MANIFEST" || { say "cannot write $dest/$MANIFEST"; exit 1; }

# The marker: what a reader can check the copy against, "<bytes> <path>" per file.
partial="$dest/.$MARKER.partial"
{
    printf 'run %s\nexported %s\n' "$run" "$exported_at"
    (cd "$dest" && find . -type f ! -name ".$MARKER.partial" | sort) | while IFS= read -r file; do
        printf '%s %s\n' "$(wc -c <"$dest/$file" | tr -d ' ')" "${file#./}"
    done
} >"$partial" || { say "cannot write $partial"; exit 1; }
mv -f "$partial" "$dest/$MARKER" || { say "cannot write $dest/$MARKER"; exit 1; }
say "run $run exported to $dest"

#!/usr/bin/env bash
# Nightly snapshots with history: tonight's snapshot of SOURCE/ is made in BACKUP/<date>
# against the newest earlier one (squeeze --link-dest: every file unchanged since then is a
# hard link of that night's output, so a night costs only what changed), then the
# snapshots are thinned to the newest KEEP_DAILY, plus the newest of each of the
# KEEP_WEEKLY most recent weeks (ISO weeks); the rest are removed.
#
#   install -m 755 squeeze-snapshots.sh /usr/local/bin/squeeze-snapshots
#   squeeze-snapshots /data/ /backup/snapshots        # or from squeeze-snapshots.service
#   squeeze -d -o /restore /backup/snapshots/2026-11-30/   # any night back, hard links and all
#
# A night is made in BACKUP/.unfinished-<date> and renamed to BACKUP/<date> only once
# squeeze exited 0, so a name of the form YYYY-MM-DD is always a whole snapshot. A night that
# fails leaves the previous snapshot the newest, removes nothing, and exits with squeeze's
# status; the same night run again resumes it (squeeze resumes an unfinished snapshot), and
# the next night's run discards it. Snapshots are thinned only after a night succeeded, and
# tonight's is always kept: the only good snapshot is never removed.
#
# Environment:
#   KEEP_DAILY     newest snapshots kept (default 7, at least 1)
#   KEEP_WEEKLY    weeks whose newest snapshot is kept too (default 4)
#   SQUEEZE        the squeeze binary (default /usr/local/bin/squeeze)
#   SNAPSHOT_DATE  tonight's name, YYYY-MM-DD (default: today; tests step through days)
#
# Exit status: 0 when tonight's snapshot exists (made now, or earlier today); squeeze's
# status when it failed (1: files failed, 64: usage, 128+N: stopped by signal N); 2 when this
# script is used wrongly.
set -euo pipefail

usage() {
  echo "usage: squeeze-snapshots SOURCE/ BACKUP" >&2
  exit 2
}
[[ $# -eq 2 ]] || usage
source=$1
backup=$2
keep_daily=${KEEP_DAILY:-7}
keep_weekly=${KEEP_WEEKLY:-4}
squeeze=${SQUEEZE:-/usr/local/bin/squeeze}
tonight=${SNAPSHOT_DATE:-$(date +%F)}
snapshot_name='^[0-9]{4}-[0-9]{2}-[0-9]{2}$'
[[ $tonight =~ $snapshot_name ]] && date -d "$tonight" +%F >/dev/null 2>&1 \
  || { echo "squeeze-snapshots: '$tonight' is not a date (YYYY-MM-DD)" >&2; exit 2; }
[[ $keep_daily =~ ^[0-9]+$ && $keep_daily -ge 1 ]] \
  || { echo "squeeze-snapshots: KEEP_DAILY must be 1 or more" >&2; exit 2; }
[[ $keep_weekly =~ ^[0-9]+$ ]] \
  || { echo "squeeze-snapshots: KEEP_WEEKLY must be 0 or more" >&2; exit 2; }

# The run works inside BACKUP: a relative SOURCE is made absolute first (its trailing slash
# kept: squeeze maps arguments as rsync does).
[[ $source == /* ]] || source=$PWD/$source
mkdir -p -- "$backup"
cd -- "$backup"

# Removes snapshot folder $1: renamed out of the snapshots' names first, so a removal cut
# short never leaves a partial tree under a date. Only folders are made writable: files are
# shared with other snapshots (hard links), and a chmod would change them there too.
remove_tree() {
  local doomed=.removing-$1
  [[ $1 == .removing-* ]] && doomed=$1 || mv -T -- "$1" "$doomed"
  find "$doomed" -type d ! -perm -u=w -exec chmod u+w {} +
  rm -rf -- "$doomed"
}

# What earlier runs left: removals cut short, and unfinished nights other than tonight's.
for left in .removing-* .unfinished-*; do
  [[ -e $left ]] || continue
  [[ $left == ".unfinished-$tonight" ]] && continue
  remove_tree "$left"
done

# Every snapshot, oldest first (dates sort as text).
snapshots() {
  local name
  for name in *; do
    if [[ -d $name && ! -L $name && $name =~ $snapshot_name ]]; then echo "$name"; fi
  done | sort
}

if [[ -d $tonight ]]; then
  exit 0 # made earlier today
fi

latest=$(snapshots | awk -v tonight="$tonight" '$0 < tonight' | tail -n 1)
work=.unfinished-$tonight
arguments=(-q -o "$work")
# Relative to the -o folder, as rsync's --link-dest: ../<latest> is BACKUP/<latest>.
[[ -n $latest ]] && arguments+=(--link-dest "../$latest")
status=0
# What the folder holds besides squeeze's temporaries (.squeeze-*.tmp): a run killed while
# it wrote its marker leaves only its temporary, and that folder is still a new snapshot's.
contents=
[[ -d $work ]] && contents=$(find "$work" -mindepth 1 -maxdepth 1 ! -name '.squeeze-*.tmp' -print -quit)
if [[ ! -e $work/.squeeze-snapshot && -n $contents ]]; then
  # squeeze finished it (its marker goes only once every entry is on disk), and this script
  # was stopped before the rename: running squeeze again would refuse a finished snapshot.
  :
else
  "$squeeze" "${arguments[@]}" "$source" || status=$?
fi
if [[ $status -ne 0 ]]; then
  echo "squeeze-snapshots: tonight's snapshot ($tonight) failed with status $status;" \
    "${latest:-no snapshot} stays the newest, nothing was removed" >&2
  exit "$status"
fi
mv -T -- "$work" "$tonight"
sync -- . # the rename is on disk before anything is removed

# Thinning: the newest KEEP_DAILY, and the newest of each of the KEEP_WEEKLY latest weeks.
mapfile -t all < <(snapshots | sort -r)
declare -A keep=()
weeks=0
last_week=
for index in "${!all[@]}"; do
  name=${all[$index]}
  ((index < keep_daily)) && keep[$name]=1
  week=$(date -d "$name" +%G-%V)
  if [[ $week != "$last_week" ]]; then
    last_week=$week
    ((weeks < keep_weekly)) && keep[$name]=1
    weeks=$((weeks + 1))
  fi
done
keep[$tonight]=1
for name in "${all[@]}"; do
  [[ -n ${keep[$name]:-} ]] || remove_tree "$name"
done

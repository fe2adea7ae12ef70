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
# squeeze exited 0, so a name of the form YYYY-MM-DD is always a whole snapshot. A night
# whose run went through the tree but failed some files (status 1: a file that cannot be
# read, a name clash) is kept as BACKUP/<date>-partial: everything but the failed files, so
# one file that fails every night does not stop the history of all the others; later nights
# link against it too (newest first), and it is thinned by its date like the others. A night
# that fails otherwise (nothing made, stopped by a signal or a full disk) leaves the previous
# snapshot the newest and removes nothing; the same night run again resumes it (squeeze
# resumes an unfinished snapshot), and the next night's run keeps what it made as
# <date>-partial. Every
# failure exits with squeeze's status, so the unit fails and the journal names the files.
# Snapshots are thinned only after a night succeeded, and tonight's is always kept: the
# only whole snapshot is never removed. An empty SOURCE (a disk not mounted) makes no
# snapshot and removes nothing (status 1), or a few such nights would thin the real history
# away; ALLOW_EMPTY_SOURCE=1 snapshots it anyway.
#
# Environment:
#   KEEP_DAILY     newest snapshots kept (default 7, at least 1)
#   KEEP_WEEKLY    weeks whose newest snapshot is kept too (default 4)
#   SQUEEZE        the squeeze binary (default /usr/local/bin/squeeze)
#   SNAPSHOT_DATE  tonight's name, YYYY-MM-DD (default: today; tests step through days)
#   ALLOW_EMPTY_SOURCE  1 to snapshot an empty SOURCE (default: refused)
#
# Exit status: 0 when tonight's snapshot exists (made now, or earlier today); squeeze's
# status when it failed (1: files failed, 64: usage, 74: the backup's file system is full,
# 128+N: stopped by signal N); 2 when this script is used wrongly.
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
partial_name='^[0-9]{4}-[0-9]{2}-[0-9]{2}-partial$'
[[ $tonight =~ $snapshot_name ]] && date -d "$tonight" +%F >/dev/null 2>&1 \
  || { echo "squeeze-snapshots: '$tonight' is not a date (YYYY-MM-DD)" >&2; exit 2; }
[[ $keep_daily =~ ^[0-9]+$ && $keep_daily -ge 1 ]] \
  || { echo "squeeze-snapshots: KEEP_DAILY must be 1 or more" >&2; exit 2; }
[[ $keep_weekly =~ ^[0-9]+$ ]] \
  || { echo "squeeze-snapshots: KEEP_WEEKLY must be 0 or more" >&2; exit 2; }

# The run works inside BACKUP: a relative SOURCE is made absolute first (its trailing slash
# kept: squeeze maps arguments as rsync does). BACKUP itself is made when missing, never its
# parents (as squeeze -o and rsync make only the last folder): a backup disk that is not
# mounted fails the night instead of filling the file system below its mount point.
[[ $source == /* ]] || source=$PWD/$source
[[ -d $backup ]] || mkdir -- "$backup"
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

# True when folder $1 holds anything besides squeeze's marker of an unfinished snapshot and
# squeeze's temporaries.
made_something() {
  [[ -n $(find "$1" -mindepth 1 -maxdepth 1 ! -name .squeeze-snapshot \
    ! -name '.squeeze-*.tmp' -print -quit) ]]
}

# Keeps the unfinished night $1 (a folder) as <date>-partial for date $2, replacing an
# earlier partial of that date.
keep_partial() {
  if [[ -d $2-partial ]]; then remove_tree "$2-partial"; fi
  mv -T -- "$1" "$2-partial"
}

# What earlier runs left: removals cut short, and nights other than tonight's still under
# .unfinished-<date>: one squeeze finished (no marker) whose rename was cut short gets its
# date; one stopped by a signal or a crash is kept as a partial night if it made anything.
for left in .removing-* .unfinished-*; do
  [[ -e $left ]] || continue
  [[ $left == ".unfinished-$tonight" ]] && continue
  night=${left#.unfinished-}
  if [[ $left == .unfinished-* ]] && made_something "$left"; then
    if [[ ! -e $left/.squeeze-snapshot && ! -e $night ]]; then
      mv -T -- "$left" "$night"
    else
      keep_partial "$left" "$night"
    fi
  else
    remove_tree "$left"
  fi
done

# Every whole snapshot, oldest first (dates sort as text).
snapshots() {
  local name
  for name in *; do
    if [[ -d $name && ! -L $name && $name =~ $snapshot_name ]]; then echo "$name"; fi
  done | sort
}

# Every partial night, oldest first.
partials() {
  local name
  for name in *; do
    if [[ -d $name && ! -L $name && $name =~ $partial_name ]]; then echo "$name"; fi
  done | sort
}

if [[ -d $tonight ]]; then
  exit 0 # made earlier today
fi

# An empty source is most likely one not mounted: its snapshot would be empty, and thinning
# after a few such nights would remove every night that holds the data.
if [[ ${ALLOW_EMPTY_SOURCE:-0} != 1 && -d $source ]] \
  && [[ -z $(find "$source" -mindepth 1 -maxdepth 1 -print -quit) ]]; then
  echo "squeeze-snapshots: the source '$source' is empty (not mounted?): no snapshot is made" \
    "and nothing is removed (ALLOW_EMPTY_SOURCE=1 snapshots it anyway)" >&2
  exit 1
fi

latest=$(snapshots | awk -v tonight="$tonight" '$0 < tonight' | tail -n 1)
work=.unfinished-$tonight
arguments=(-q -o "$work")
# Relative to the -o folder, as rsync's --link-dest: ../<latest> is BACKUP/<latest>. The
# partial nights since the latest whole one (tonight's earlier attempt included) come first,
# newest first, at most eight: their outputs are the most recent.
mapfile -t recent < <(partials | awk -v after="$latest" -v tonight="$tonight" \
  'substr($0, 1, 10) > after && substr($0, 1, 10) <= tonight' | sort -r | head -n 8)
for name in "${recent[@]}"; do arguments+=(--link-dest "../$name"); done
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
if [[ $status -eq 1 ]] && made_something "$work"; then
  keep_partial "$work" "$tonight"
  sync -- .
  echo "squeeze-snapshots: some files failed tonight (named above); tonight's snapshot is" \
    "kept without them as $tonight-partial, ${latest:-no snapshot} stays the newest whole one," \
    "nothing was removed" >&2
  exit "$status"
fi
if [[ $status -eq 74 ]]; then
  echo "squeeze-snapshots: the backup's file system is full; tonight's snapshot ($tonight)" \
    "stopped unfinished in $work, ${latest:-no snapshot} stays the newest, nothing was" \
    "removed; make room and run again (it resumes)" >&2
  exit "$status"
fi
if [[ $status -ne 0 ]]; then
  echo "squeeze-snapshots: tonight's snapshot ($tonight) failed with status $status;" \
    "${latest:-no snapshot} stays the newest, nothing was removed" >&2
  exit "$status"
fi
mv -T -- "$work" "$tonight"
sync -- . # the rename is on disk before anything is removed
# Tonight's partial attempt, if any, is superseded by the whole snapshot.
if [[ -d $tonight-partial ]]; then remove_tree "$tonight-partial"; fi

# Thinning: the newest KEEP_DAILY nights, whole or partial, and the newest of each of the
# KEEP_WEEKLY latest weeks; tonight's whole snapshot always.
mapfile -t all < <({ snapshots; partials; } | sort -r)
declare -A keep=()
weeks=0
last_week=
for index in "${!all[@]}"; do
  name=${all[$index]}
  ((index < keep_daily)) && keep[$name]=1
  week=$(date -d "${name%-partial}" +%G-%V)
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

#!/bin/sh
# beyondswe: check out the base commit and remove every trace of newer history, then prove it.
#
# Usage: strip_history.sh WORKDIR [BASE_COMMIT]
#
# Used in two places with the same semantics: the Harbor task Dockerfile (so an agent cannot read
# the fix from `git log --all`) and the offline grader's prepare step. POSIX sh; needs git.
#
# What it removes: every ref that is not an ancestor of HEAD, all tags, remote-tracking refs and
# remote configuration, the stash, notes, reflogs, FETCH_HEAD/ORIG_HEAD/MERGE_HEAD and similar
# files, alternates; then it prunes unreachable objects. HEAD is left detached at the base commit.
# It then lists every commit object still stored and fails (exit 3) if one is not HEAD's ancestor.
set -eu

workdir=${1:?usage: strip_history.sh WORKDIR [BASE_COMMIT]}
base=${2:-}

cd "$workdir"
if ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "beyondswe-strip: $workdir is not a git repository; nothing to strip" >&2
    exit 0
fi
git config --global --add safe.directory '*' 2>/dev/null || true
gitdir=$(git rev-parse --git-dir)

if [ -n "$base" ]; then
    git -c advice.detachedHead=false checkout -q -f "$base" -- 2>/dev/null \
        || git -c advice.detachedHead=false checkout -q -f "$base"
fi
head=$(git rev-parse --verify HEAD)
# Detach so that no branch name can point past the base.
git update-ref --no-deref HEAD "$head"

# Delete every ref except those that are ancestors of HEAD and are local branches.
git for-each-ref --format='%(refname)' | while IFS= read -r ref; do
    case "$ref" in
        refs/heads/*)
            if git merge-base --is-ancestor "$ref" "$head" 2>/dev/null; then
                continue
            fi
            ;;
    esac
    git update-ref -d "$ref" 2>/dev/null || true
done

for remote in $(git remote 2>/dev/null); do
    git remote remove "$remote" >/dev/null 2>&1 || true
done
for f in FETCH_HEAD ORIG_HEAD MERGE_HEAD CHERRY_PICK_HEAD REVERT_HEAD BISECT_LOG AUTO_MERGE; do
    rm -f "$gitdir/$f"
done
rm -rf "$gitdir/logs" "$gitdir/refs/original" "$gitdir/rebase-merge" "$gitdir/rebase-apply"
rm -f "$gitdir/objects/info/alternates" "$gitdir/info/grafts" "$gitdir"/objects/pack/*.keep
git reflog expire --expire=now --all >/dev/null 2>&1 || true
git -c gc.auto=0 gc --prune=now --quiet >/dev/null 2>&1 || git prune --expire=now >/dev/null 2>&1 || true

# Proof: every stored commit must be HEAD or one of its ancestors.
ancestors=$(mktemp)
stored=$(mktemp)
git rev-list "$head" | sort >"$ancestors"
git cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)' \
    | awk '$1 == "commit" { print $2 }' | sort >"$stored"
leaked=$(comm -13 "$ancestors" "$stored" | head -n 5)
rm -f "$ancestors" "$stored"
if [ -n "$leaked" ]; then
    echo "beyondswe-strip: commits newer than HEAD are still stored:" >&2
    echo "$leaked" >&2
    exit 3
fi
refs_left=$(git for-each-ref --format='%(refname)' | wc -l)
echo "beyondswe-strip: HEAD=$head refs_kept=$refs_left future_commits=0" >&2

# tests/cli/sweep_review.sh - sourced by cases.sh (inside run.sh: $C, pass,
# fail, check). `conveyor sweep` cases from a review (adversarial run): each
# bad input exits 2 before or instead of a wrong result.
sr_dir=$(mktemp -d)
# sr_true NAME CONDITION...: one more case, passed when the command succeeds
sr_true() {
    name=$1; shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name" >&2; fi
}

# -o a directory: refused before any point runs (it ran the whole grid, then
# the rename failed with exit 1 and left DIR.partial)
mkdir "$sr_dir/outdir"
check sweep-out-is-dir 2 'outdir: is a directory' -- sweep tests/data/sweep/collective-root.json -o "$sr_dir/outdir"
sr_true sweep-out-is-dir-no-partial test ! -e "$sr_dir/outdir.partial"

rm -rf "$sr_dir"

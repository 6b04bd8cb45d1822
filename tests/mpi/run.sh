#!/bin/sh
# MPI sweep test: build with `make MPI=1` (build/mpi/conveyor), run the
# small test sweep over 3 ranks (rank 0 hands out points and writes, two
# workers run them) and check the CSV is byte-identical to the threaded run.
# Needs openmpi-bin and libopenmpi-dev (scripts/deps.sh). Run: make mpitest
set -e
cd "$(dirname "$0")/../.."
spec=tests/data/sweep/small.json
tmp=${TMPDIR:-/tmp}/conveyor-mpitest.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
make --no-print-directory MPI=1 build/mpi/conveyor >/dev/null
make --no-print-directory build/conveyor >/dev/null
build/conveyor sweep "$spec" -j 2 -o "$tmp/threads.csv"
mpirun --allow-run-as-root --oversubscribe -n 3 build/mpi/conveyor sweep "$spec" -o "$tmp/mpi.csv"
if cmp "$tmp/threads.csv" "$tmp/mpi.csv"; then
    echo "mpitest: mpirun -n 3 CSV identical to the threaded run ($(($(wc -l < "$tmp/mpi.csv") - 1)) points)"
else
    echo "mpitest: FAILED: the MPI CSV differs from the threaded one" >&2
    diff "$tmp/threads.csv" "$tmp/mpi.csv" | head -20 >&2
    exit 1
fi
# resume over MPI: keep the header and 4 rows, finish the rest
head -n 5 "$tmp/threads.csv" > "$tmp/part.csv"
mpirun --allow-run-as-root --oversubscribe -n 3 build/mpi/conveyor sweep "$spec" --resume -o "$tmp/part.csv"
cmp "$tmp/threads.csv" "$tmp/part.csv" || { echo "mpitest: FAILED: MPI --resume differs" >&2; exit 1; }
echo "mpitest: MPI --resume completes the CSV identically"

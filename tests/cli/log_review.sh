# tests/cli/log_review.sh - sourced by cases.sh (inside run.sh: $C, check,
# pass, fail). A review of the nccl-tests log reader (2026-12,
# docs/formats-nccl-tests.md "Reader"): logs captured the way clusters print
# them are read whole. Each file under tests/data/nccltests/formats/ is
# conveyor's own 8-GPU table (dgx-a100, 1-8 MiB) in a real-world wrapping, so
# `validate` on the same system must read all 4 rows back at 0.0x% error; a
# row read wrong or skipped shows in points= or the error.
lr=tests/data/nccltests/formats
lr_ok='points=4 median_abs_err=0\.0[0-9]% p90_abs_err=0\.0[0-9]% max_abs_err=0\.0[0-9]%'

# 1. Launcher prefixes. Open MPI's --tag-output on every line, indented as aws/aws-k8s-tester pastes it,
#    other ranks' NCCL INFO lines and a <stderr> line between: no row was read ("expected an nccl-tests
#    result table ... got none"). With --timestamp-output too (ctime before the tag, open-mpi/ompi#7710):
#    the same.
check log-ompi-tag-output 0 "$lr_ok" -- validate --topo dgx-a100 "$lr/ompi-tag-output-allreduce.txt"
check log-ompi-timestamp-tag-output 0 "$lr_ok" -- validate --topo dgx-a100 "$lr/ompi-timestamp-tag-output-allreduce.txt"

# 2. Rows cut by NCCL_DEBUG=INFO lines: nccl-tests prints a row in three writes to the stdout NCCL logs
#    to, so a call's INFO line ends the piece printed so far. Behind a "[N] " tag on every write
#    (NVIDIA/nccl#1453): nothing was read; without a tag: the row's last piece was "cut short".
check log-rank-tag-split-rows 0 "$lr_ok" -- validate --topo dgx-a100 "$lr/rank-tag-split-rows-allreduce.txt"
check log-nccl-info-split-rows 0 "$lr_ok" -- validate --topo dgx-a100 "$lr/nccl-info-split-rows-allreduce.txt"
#    the TUNING lines glued to the rows are NCCL's choices still (4 sizes)
check log-split-rows-tuning 0 '# tuner: sizes=4 ' -- validate --topo dgx-a100 "$lr/nccl-info-split-rows-allreduce.txt"

# 3. Old layouts (NVIDIA/nccl-tests issues 118/176: no root column, "error" floats such as 1e-06; issue
#    82: broadcast with a root but no redop, error N/A). These were read before; checked here with
#    validate's numbers.
check log-old-error-column 0 "$lr_ok" -- validate --topo dgx-a100 --op all_reduce "$lr/old-error-column-allreduce.txt"
check log-old-root-no-redop 0 "$lr_ok" -- validate --topo dgx-a100 --op broadcast "$lr/old-root-no-redop-broadcast.txt"

# 4. CRLF, tabs for blanks, no newline after the last row: tabs in "#" lines hid the collective and
#    the device lines ("expected a collective name ... pass --op").
check log-crlf-tabs-no-final-newline 0 "$lr_ok" -- validate --topo dgx-a100 "$lr/crlf-tabs-no-final-newline-allreduce.txt"

#    Several runs one after another: refused at the second run's first line, naming the runs
#    (before: "expected each sweep once per table" at its first row); --run N reads run N, its lines
#    named (run 2: 16-64 MiB, 3 rows); a run that is not there is refused.
check log-runs-refused 2 'three-runs-allreduce-allreduce-allgather\.txt:27:1: expected one nccl-tests run per file, got a second one here \(run 1: lines 1-26, all_reduce_perf; run 2: lines 27-50, all_reduce_perf; 3 runs in all\): validate --run N' -- validate --topo dgx-a100 "$lr/three-runs-allreduce-allreduce-allgather.txt"
check log-runs-pick-3 0 "# run 3 of the 3 in the log \(lines 51-76\)" -- validate --topo dgx-a100 --run 3 "$lr/three-runs-allreduce-allreduce-allgather.txt"
check log-runs-pick-3-allgather 0 "all_gather, -g 1" -- validate --topo dgx-a100 --run 3 "$lr/three-runs-allreduce-allreduce-allgather.txt"
check log-runs-pick-2 0 "points=3 median_abs_err=0\.0[0-9]%" -- validate --topo dgx-a100 --run 2 "$lr/three-runs-allreduce-allreduce-allgather.txt"
check log-runs-pick-missing 2 ':1:1: expected run 4 \(--run\), got 3 nccl-tests runs' -- validate --topo dgx-a100 --run 4 "$lr/three-runs-allreduce-allreduce-allgather.txt"

# 5. What a job prints before the table: a harness's dated log lines, ssh's known-hosts warning,
#    nvidia-smi (its +---+ rule was read as a row: "size: expected a non-negative integer"), an Open
#    MPI warning banner (------), mpirun's launch report, addresses.
check log-noise-before-table 0 "$lr_ok" -- validate --topo dgx-a100 "$lr/noise-before-table-allreduce.txt"

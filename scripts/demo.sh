#!/bin/sh
# make demo: the main job on shipped systems: an nccl-tests style all_reduce
# sweep on 8x H100 (NVSwitch + NVLS), with the tuner's choices per size, and
# the same sweep validated against a real measured run.
C=${1:-build/conveyor}
set -e
echo "== conveyor collective --topo dgx-h100 --op all_reduce -b 8 -e 8G -f 4 --explain"
"$C" collective --topo dgx-h100 --op all_reduce -b 8 -e 8G -f 4 --explain
echo
echo "== conveyor validate --topo dgx-a100 tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt"
"$C" validate --topo dgx-a100 tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt

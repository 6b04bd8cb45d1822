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
echo
echo "== conveyor scale --model llama3-8b --systems gb200-nvl72:8/72,hgx-b200:8/72,dgx-h100:8/72 --sp --zero 1 --auto --plot build/demo-8-to-72.svg"
echo "   (the short form of docs/studies/8-to-72.md, make studies: 8 -> 72 GPUs, one NVLink domain vs servers on InfiniBand)"
"$C" scale --model llama3-8b --systems gb200-nvl72:8/72,hgx-b200:8/72,dgx-h100:8/72 --sp --zero 1 --auto \
    --plot build/demo-8-to-72.svg
echo "picture: build/demo-8-to-72.svg (speedup against GPUs; the whole study: docs/studies/8-to-72.md)"

# tests/cli/limits.sh - sourced by cases.sh (inside run.sh: $C, check): inputs
# at the edges of what the models can represent give exit 2 with a message,
# not a wrapped number or a sanitizer report.

# the simulated clock (2^60 ps, about 13 days): a transfer past it is an error
check clock-range-collective 2 "clock's range" -- collective --topo tests/data/topo/slowest-links.json -b 256G -e 256G
check clock-range-alltoall 2 "clock's range" -- collective --topo tests/data/topo/slowest-links.json --op alltoall -b 1T -e 1T
check clock-range-inside 0 "1073741824 +268435456" -- collective --topo tests/data/topo/slowest-links.json -b 1G -e 1G

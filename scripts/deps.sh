#!/bin/sh
# Check the Debian packages conveyor needs; install the missing ones as root,
# otherwise print the exact command and fail.
PKGS="libglib2.0-dev libcjson-dev libcsv-dev libcunit1-dev pkg-config gnuplot-nox openmpi-bin libopenmpi-dev valgrind"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "deps: installing$missing"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null || {
        echo "deps: apt-get install failed" >&2; exit 1; }
else
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: run: sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
fi

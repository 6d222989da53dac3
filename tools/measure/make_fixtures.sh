#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates every measured fixture under tests/data/measured/ (a few
# minutes on one CPU core). Needs Debian's python3-torch: /usr/bin/python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec /usr/bin/python3 "$here/measure.py" --out "$here/../../tests/data/measured" "$@"

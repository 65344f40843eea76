#!/usr/bin/env bash
# Prints the steps of the ladder, one per line, in order: the STEPS list of CMakeLists.txt.
sed -n 's/^  \(step[0-9][0-9]_[a-z_]*\)$/\1/p' "$(dirname "$0")/../CMakeLists.txt"

#!/usr/bin/env bash
# Prints the path of a python3 that can import matplotlib; exits 1 if there is none.
# Debian's python3-matplotlib installs for /usr/bin/python3, which need not be the first
# python3 on PATH (pyenv, venvs), so every candidate is asked.
for py in "${PLOT_PYTHON:-}" /usr/bin/python3 "$(command -v python3 2>/dev/null)" /usr/local/bin/python3; do
  [ -n "$py" ] && [ -x "$py" ] || continue
  if "$py" -c 'import matplotlib' >/dev/null 2>&1; then
    echo "$py"
    exit 0
  fi
done
exit 1

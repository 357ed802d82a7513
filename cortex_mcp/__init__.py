"""cortex-mcp: long-term memory for AI agents, served over MCP."""

import os

__version__ = "0.1.0"

# A memory server runs beside an agent on small machines: BLAS thread pools there make the
# vector search's one matrix-vector product slower, not faster (measured on 2 cores: 8 ms with
# OpenBLAS's default threads, 0.56 ms with one, for 10K x 384). Set before numpy loads;
# an explicit setting by the user wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

"""The stages of a search, one per module, in the order `search/hybrid.py` runs them:

parse -> channels (text, vector) -> fuse -> signals -> time -> entity -> rerank -> diversity -> budget

Each stage reads and changes one `SearchState` (state.py) and is timed by the pipeline.
A new stage is one module here and one line in `hybrid.PIPELINE`."""

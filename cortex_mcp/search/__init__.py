"""Search: text (FTS5), vectors (sqlite-vec or numpy), and the fusion that ranks them."""

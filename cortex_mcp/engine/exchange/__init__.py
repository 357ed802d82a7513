"""Exchange: import from other memory formats, export, and the Markdown mirrors."""

"""dpkme: differentially private data release through kernel mean embeddings."""

__version__ = "0.1.0"

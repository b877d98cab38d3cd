"""Embedding projections (PCA, t-SNE, UMAP, neighbours) with a bounded cache and job queue."""

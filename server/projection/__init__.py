"""Embedding projections (PCA, t-SNE, UMAP, neighbours) with a bounded cache and job queue."""

from .jobs import Busy, cached_or_run, matrix, partial
from .methods import (
    MAX_NEIGHBORS,
    PCA_COMPONENTS,
    MissingDependency,
    ProjectionError,
    budget,
    default_perplexity,
    fit_pca,
    neighbors,
    pca,
    tsne,
    umap,
)

__all__ = ["MAX_NEIGHBORS", "PCA_COMPONENTS", "Busy", "MissingDependency", "ProjectionError", "budget", "cached_or_run",
           "default_perplexity", "fit_pca", "matrix", "neighbors", "partial", "pca", "tsne", "umap"]

"""Embedding projections (PCA, t-SNE, UMAP, neighbours) with a bounded cache and job queue."""

from .jobs import Busy, cached_or_run, matrix, partial
from .methods import (
    MAX_NEIGHBORS,
    PCA_COMPONENTS,
    PCA_FIT_POINTS,
    PCA_POINTS,
    TSNE_POINTS,
    UMAP_POINTS,
    MissingDependency,
    ProjectionError,
    default_perplexity,
    fit_pca,
    neighbors,
    pca,
    tsne,
    umap,
)

__all__ = ["MAX_NEIGHBORS", "PCA_COMPONENTS", "PCA_FIT_POINTS", "PCA_POINTS", "TSNE_POINTS", "UMAP_POINTS", "Busy",
           "MissingDependency", "ProjectionError", "cached_or_run", "default_perplexity", "fit_pca", "matrix",
           "neighbors", "partial", "pca", "tsne", "umap"]

"""HParams across runs: the rows (add_hparams sessions or a run's config), their axes, and parameter importance."""

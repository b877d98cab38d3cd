"""Commands: the envelope every producer event becomes, jobs for the writer, and the env and hparams ops."""

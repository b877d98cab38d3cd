"""Commands: the envelope every producer event becomes, the op table and the ops of each family."""

"""torch.utils.tensorboard's SummaryWriter API on paneboard: writer, conversions, summaries, graph trace."""

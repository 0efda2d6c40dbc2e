"""A run's records, as read after (or while) it runs: its state and outcome (`run_state`), the
post-run report (`report`) and the TensorBoard scalars both read (`tensorboard_scalars`)."""

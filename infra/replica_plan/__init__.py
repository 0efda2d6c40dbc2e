"""What one replica gets: its command, args, env, TF_CONFIG, data env and supervision.

Derived once from the stack's config (`plan.replica_plans`) and rendered two ways: as a pod by
`infra/manifests/workloads.py`, as a process by `infra/local/plan.py`. `trainer_env` is the
trainer's contract (TF_CONFIG, hyperparameters), `run_data` the data a run reads and writes.
"""

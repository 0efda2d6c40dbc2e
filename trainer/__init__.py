"""tftrain's trainer: an MNIST CNN trained in one process, in a ParameterServerStrategy
cluster (ps, worker, chief, optional evaluator) or in a MultiWorkerMirroredStrategy cluster
(workers, optional chief), as `TF_CONFIG` from a Kubeflow TFJob says. `python -m trainer`.

Its whole contract: `TF_CONFIG`, flags or `TFTRAIN_*` env vars (`settings`), a data dir and
an output dir (layout in `outputs`). It imports nothing from `infra/`.

Reading order: `__main__` (entry, exit codes); `settings`, `tf_config`, `plan` (what this
process does; pure Python, checked before TensorFlow is imported) and `output_dir`; `data`
(checksummed IDX files); `train_loop` (one training run, top to bottom) with `distribution`
(strategy, input pipeline, fused steps), `model`, `steps`, `progress` and `outputs` (with
`checkpoint_store`: which checkpoint files count, and resuming from the newest intact
one); `preemption` (SIGTERM: save the step, then exit); `server` and `evaluator` for the
other roles. How a run ends (ps and workers stopped once the chief has succeeded) is not the
trainer's business: `infra/lifecycle/supervise.sh` wraps every replica.
"""

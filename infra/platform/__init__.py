"""What a run stands on beside its config: the platform stack's outputs (`outputs`), the facts
the cloud layer decides during `up` (`cluster_facts`) and the GPU driver (`gpu_driver`).
Nothing here imports Pulumi: the offline render uses it with PyYAML alone."""

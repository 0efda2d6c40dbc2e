"""Run a stack's training topology on this machine: `python -m infra.local <stack>`.

The same config model and topology as the Pulumi program, with every replica moved to a
free localhost port and started as a real process running the stack's own command, so a
TFJob-style trainer that works here works in the cluster and vice versa.

Modules: `plan` (stack → the processes to start, TensorBoard included), `ports` (free
localhost ports), `process` (a child in its own process group; output streaming;
stopping), `supervisor` (what a replica's exit does to the job: success, a restart on
its port up to `job.backoffLimit`, or failure), `cli` (`main(argv)`).
"""

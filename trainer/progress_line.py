"""The progress line a person reads, from step arithmetic alone (no TensorFlow).

The seed trainers' shape, with the totals a reader wants beside each count:
`Step: 900/1876 (47 %), Epoch: 2/4, Batch: 431 of 469, Cost: 0.0612, AvgTime: 4.1ms,
ETA 1m12s`. The totals are this run's own (`hyperparams.epochs`, `maxSteps`), so a sweep's
trial shows its own.
"""

from __future__ import annotations

from trainer.steps import StepPlan


def duration(seconds: float) -> str:
    """`45s`, `1m12s`, `2h05m`: whole seconds, the largest two units."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def progress_line(plan: StepPlan, step: int, loss: float, seconds_per_step: float) -> str:
    epoch, batch = plan.position(step)
    percent = 100 * step // plan.final_step
    eta = duration(seconds_per_step * (plan.final_step - step))
    return (
        f"Step: {step}/{plan.final_step} ({percent} %), Epoch: {epoch}/{plan.epochs}, "
        f"Batch: {batch} of {plan.steps_per_epoch}, Cost: {loss:.4f}, "
        f"AvgTime: {1000 * seconds_per_step:.1f}ms, ETA {eta}"
    )

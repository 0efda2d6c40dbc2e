"""What `--diff` and the review comment open with, in the order a reviewer reads it: the config
change as the user wrote it (`infra.render.config_changes`), its consequences
(`infra.render.summary`), then its cost and the stack's budget (`infra.render.cost_lines`).
"""

from __future__ import annotations

from datetime import UTC, datetime

from infra.config.stack_file import StackFile
from infra.pricing.table import PriceTableError, load_table
from infra.render.config_changes import SECRET_CHANGED, config_section, jobs_by_group
from infra.render.cost_lines import cost_lines, price_side
from infra.render.parsed import parse_render
from infra.render.summary import summarize

# The consequences compare renders that hold every secret as a placeholder: a rotated secret
# is no change to them, while the engine acts on it (its config line says how).
SECRET_NOTE = (
    "Secrets: the lines above compare renders that show every secret as <secret>; what the "
    "engine does with each changed secret is on its config line"
)


def review_summary(
    old_text: str,
    new_text: str,
    files: tuple[StackFile | None, StackFile | None],
    stack: str,
    names: tuple[str, str],
) -> str:
    """The three parts, each a block of lines, blank-line separated."""
    jobs = jobs_by_group(parse_render(new_text).objects)
    changes = config_section(files[0], files[1], jobs, names)
    consequences = summarize(old_text, new_text, stack, *names)
    if any(SECRET_CHANGED in line for line in changes):
        consequences += SECRET_NOTE + "\n"
    try:
        table = load_table()
    except PriceTableError as error:
        cost = [f"Cost: not priced: {error}"]
    else:
        today = datetime.now(UTC).date()
        cost = cost_lines(price_side(files[0], table), price_side(files[1], table), table, today)
    return "\n".join(changes) + "\n\n" + consequences + "\n" + "\n".join(cost) + "\n"

"""Every one-change mutant of a POSIX sh script, made by rule (mutmut mutates Python only).

The rules are the shell's counterparts of mutmut's operators: a comparison turned
around, `&&` for `||`, an exit status that says the opposite, a number one higher, a
negation dropped, an append that truncates, a loop's `continue` that breaks out, and a
command deleted (replaced by `:`). Each applies at every place it matches, on every line
that is code: comment lines are left alone, and so is a line's trailing comment. A mutant
the shell cannot parse is not made (`sh -n`).
"""

from __future__ import annotations

import functools
import hashlib
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

# Each rule: a pattern over a line's code and what one match becomes.
_SWAPS: tuple[tuple[str, str], ...] = (
    (r"(?<=\s)-eq(?=\s)", "-ne"),
    (r"(?<=\s)-ne(?=\s)", "-eq"),
    (r"(?<=\s)-lt(?=\s)", "-le"),
    (r"(?<=\s)-le(?=\s)", "-lt"),
    (r"(?<=\s)-gt(?=\s)", "-ge"),
    (r"(?<=\s)-ge(?=\s)", "-gt"),
    (r"(?<=\[ )-z(?=\s)", "-n"),
    (r"(?<=\[ )-n(?=\s)", "-z"),
    (r"(?<=\[ )-[efdsL](?=\s)", "! \\g<0>"),
    (r"(?<=\s)=(?=\s)", "!="),
    (r"(?<=\s)!=(?=\s)", "="),
    (r"&&", "||"),
    (r"\|\|", "&&"),
    (r"(?<![<>])>>(?!>)", ">"),
    (r"\bcontinue\b", "break"),
    (r"(?<=\bif )! ", ""),
    (r"(?<=\bwhile )! ", ""),
)
_STATUS = re.compile(r"\b(exit|return) (\d+)\b")
_NUMBER = re.compile(r"(?<![\w.$&<>-])\d+(?![\w.<>])")  # not a file descriptor
# Lines that only open or close a construct: deleting them is a syntax error, not a mutant.
_STRUCTURE = re.compile(
    r"^\s*(?:(?:then|else|fi|do|done|esac|in)\b|;;|\{|\}|\)|\S+\)\s*$|.*\(\)\s*\{|"
    r"(?:if|elif|while|until|for|case)\b)"
)


@dataclass(frozen=True)
class Mutant:
    path: str
    line: int  # 1-based
    original: str
    mutated: str
    occurrence: int = 0  # how many lines before it have the same text

    @property
    def key(self) -> str:
        """Stable across edits elsewhere in the script: the line's text (and which of the
        lines with that text it is), not its number."""
        text = f"{self.path}\0{self.original}\0{self.mutated}\0{self.occurrence}"
        return hashlib.sha1(text.encode()).hexdigest()[:12]


def _quoted(line: str) -> list[bool]:
    """For each character: inside quotes (or escaped), where a number is text, not code."""
    inside, quote, escaped = [], "", False
    for char in line:
        inside.append(bool(quote) or escaped)
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
    return inside


def code_part(line: str) -> str:
    """The line without its trailing comment: a `#` that starts a word, outside quotes."""
    quoted = _quoted(line)
    for index, char in enumerate(line):
        if char == "#" and not quoted[index] and (index == 0 or line[index - 1].isspace()):
            return line[:index].rstrip()
    return line


def _replacements(code: str) -> Iterator[str]:
    for pattern, replacement in _SWAPS:
        for match in re.finditer(pattern, code):
            yield code[: match.start()] + match.expand(replacement) + code[match.end() :]
    for match in _STATUS.finditer(code):
        opposite = "1" if match.group(2) == "0" else "0"
        yield code[: match.start(2)] + opposite + code[match.end(2) :]
    quoted = _quoted(code)
    for match in _NUMBER.finditer(code):
        if quoted[match.start()]:
            continue  # text: a message, a pattern
        if _STATUS.search(code[max(0, match.start() - 7) : match.end()]):
            continue  # an exit status: its own rule says the opposite
        bigger = str(int(match.group()) + 1)
        yield code[: match.start()] + bigger + code[match.end() :]


def _deletable(code: str, previous: str) -> bool:
    if previous.rstrip().endswith("\\") or code.rstrip().endswith("\\"):
        return False  # part of a command continued over lines
    return bool(code.strip()) and not _STRUCTURE.match(code)


def line_mutants(
    path: str, number: int, line: str, previous: str = "", occurrence: int = 0
) -> list[Mutant]:
    """Every mutant of one line (before the parse check)."""
    code = code_part(line)
    if not code.strip() or code.lstrip().startswith("#"):
        return []
    rest = line[len(code) :]
    found = [
        Mutant(path, number, line, mutated + rest, occurrence) for mutated in _replacements(code)
    ]
    if _deletable(code, previous):
        indent = code[: len(code) - len(code.lstrip())]
        found.append(Mutant(path, number, line, f"{indent}:{rest}", occurrence))
    return list(dict.fromkeys(m for m in found if m.mutated != line))


def apply(text: str, mutant: Mutant) -> str:
    lines = text.split("\n")
    if lines[mutant.line - 1] != mutant.original:
        raise ValueError(f"{mutant.path}:{mutant.line} is no longer {mutant.original!r}")
    lines[mutant.line - 1] = mutant.mutated
    return "\n".join(lines)


def parses(text: str) -> bool:
    done = subprocess.run(["sh", "-n"], input=text, text=True, capture_output=True, check=False)
    return done.returncode == 0


@functools.cache  # the run and the score page both ask; `sh -n` per mutant is the cost
def script_mutants(path: str, text: str) -> tuple[Mutant, ...]:
    """Every mutant of the script that the shell can still parse, in line order."""
    lines = text.split("\n")
    made = [
        mutant
        for index, line in enumerate(lines)
        for mutant in line_mutants(
            path, index + 1, line, lines[index - 1] if index else "", lines[:index].count(line)
        )
    ]
    return tuple(mutant for mutant in made if parses(apply(text, mutant)))

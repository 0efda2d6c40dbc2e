"""`tftrain completion bash|zsh`: the shell's completion for the front door.

Completes the verb, then stack names (`stacks/Pulumi.STACK.yaml` where the user stands, else
in the checkout) and each verb's own options, read from `tftrain VERB --help` when asked, so
the script never goes stale. zsh runs the bash function through `bashcompinit`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from infra.local.plan import REPO

PROG = "tftrain completion"
EXAMPLES = """\
examples:
  eval "$(tftrain completion bash)"                      this shell only
  tftrain completion bash > ~/.local/share/bash-completion/completions/tftrain
  echo 'eval "$(tftrain completion zsh)"' >> ~/.zshrc

exit status:
  0  the script was printed
  2  an unknown shell
"""

_BASH = """\
# tftrain shell completion (`tftrain completion bash`)
_tftrain() {
    local cur verb stacks
    cur="${COMP_WORDS[COMP_CWORD]}"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "__VERBS__ --help --version" -- "$cur"))
        return
    fi
    verb="${COMP_WORDS[1]}"
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(tftrain "$verb" --help 2>/dev/null \\
            | grep -oE -- '--[a-z][a-z-]*' | sort -u)" -- "$cur"))
        return
    fi
    stacks=$(ls stacks/Pulumi.*.yaml __REPO__/stacks/Pulumi.*.yaml 2>/dev/null \\
        | sed -E 's|.*/Pulumi\\.(.*)\\.yaml|\\1|' | sort -u)
    COMPREPLY=($(compgen -W "$stacks" -- "$cur"))
}
complete -o default -F _tftrain tftrain
"""
_ZSH = "autoload -U +X bashcompinit && bashcompinit\n"


def script(shell: str, verbs: Sequence[str]) -> str:
    text = _BASH.replace("__VERBS__", " ".join(verbs)).replace("__REPO__", str(REPO))
    return (_ZSH + text) if shell == "zsh" else text


def main(argv: Sequence[str] | None = None) -> int:
    from infra.cli import VERBS

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Print the shell completion script for tftrain.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("shell", metavar="SHELL", choices=("bash", "zsh"), help="bash or zsh")
    args = parser.parse_args(argv)
    sys.stdout.write(script(args.shell, [verb.name for verb in VERBS]))
    return 0

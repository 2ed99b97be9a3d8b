"""`lore-sidecar completion bash|zsh|fish`: completion scripts read off the argument parser,
so they list exactly the verbs and options the command takes.

    eval "$(lore-sidecar completion bash)"                         # ~/.bashrc
    eval "$(lore-sidecar completion zsh)"                          # ~/.zshrc
    lore-sidecar completion fish > ~/.config/fish/completions/lore-sidecar.fish
"""

from __future__ import annotations

import argparse


def verbs(parser: argparse.ArgumentParser) -> dict[str, tuple[list[str], list[str]]]:
    """verb -> (its long options, the choices of its positionals)."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    for action in parser._actions:  # argparse keeps its structure here; there is no public view
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                options = sorted({o for a in sub._actions for o in a.option_strings if o.startswith("--")})
                choices = [str(c) for a in sub._actions if not a.option_strings and a.choices for c in a.choices]
                out[name] = (options, choices)
    return out


def global_options(parser: argparse.ArgumentParser) -> list[str]:
    return sorted({o for a in parser._actions for o in a.option_strings if o.startswith("--")})


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    table = verbs(parser)
    if shell == "fish":
        lines = ["# lore-sidecar completions for fish",
                 f"complete -c lore-sidecar -f -n __fish_use_subcommand -a '{' '.join(table)}'"]
        lines += [f"complete -c lore-sidecar -n __fish_use_subcommand -l {o[2:]}" for o in global_options(parser)]
        for verb, (options, choices) in table.items():
            cond = f"'__fish_seen_subcommand_from {verb}'"
            lines += [f"complete -c lore-sidecar -n {cond} -l {o[2:]}" for o in options]
            if choices:
                lines.append(f"complete -c lore-sidecar -f -n {cond} -a '{' '.join(choices)}'")
        return "\n".join(lines) + "\n"
    cases = "\n".join(f"        {verb}) words=\"{' '.join(options + choices)}\" ;;" for verb, (options, choices) in table.items())
    body = f"""_lore_sidecar() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" words
    if [ "$COMP_CWORD" -eq 1 ]; then
        words="{' '.join(table)} {' '.join(global_options(parser))}"
    else
        case "${{COMP_WORDS[1]}}" in
{cases}
        *) words="" ;;
        esac
    fi
    COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}}
complete -o default -F _lore_sidecar lore-sidecar
"""
    if shell == "zsh":
        return "# lore-sidecar completions for zsh (through bash's)\nautoload -U +X bashcompinit && bashcompinit\n" + body
    return "# lore-sidecar completions for bash\n" + body

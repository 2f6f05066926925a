"""The pull-request check of ``submissions/allowed_signers``: only the author's published keys are added.

Every added line must name the pull request's author and carry one of the keys GitHub publishes for
them (``https://github.com/<login>.keys``); no line may be removed.
"""

from __future__ import annotations

import difflib


def key_of(line: str) -> tuple[str, str] | None:
    """(key type, base64) of an allowed_signers or ``.keys`` line, or None for blanks and comments."""
    fields = line.split()
    if not fields or fields[0].startswith("#"):
        return None
    for i, field in enumerate(fields[:-1]):
        if field.startswith(("ssh-", "ecdsa-", "sk-")):
            return field, fields[i + 1]
    return None


def principals_of(line: str) -> list[str]:
    """The comma-separated principals at the start of an allowed_signers line, lower-cased."""
    fields = line.split()
    return [p.strip().lower() for p in fields[0].split(",")] if fields else []


def changed_lines(old_text: str, new_text: str) -> tuple[list[str], list[str]]:
    """(added, removed) meaningful lines between two versions of an allowed_signers file."""
    old = [line.strip() for line in old_text.splitlines() if key_of(line)]
    new = [line.strip() for line in new_text.splitlines() if key_of(line)]
    added, removed = [], []
    for line in difflib.ndiff(old, new):
        if line.startswith("+ "):
            added.append(line[2:])
        elif line.startswith("- "):
            removed.append(line[2:])
    return added, removed


def signer_problems(old_text: str, new_text: str, pr_author: str, published_keys_text: str) -> list[str]:
    """What is wrong with the pull request's change to allowed_signers (empty when nothing is)."""
    published = {key for line in published_keys_text.splitlines() if (key := key_of(line))}
    added, removed = changed_lines(old_text, new_text)
    problems = [f"line removed: {line[:120]} (only maintainers remove keys)" for line in removed]
    for line in added:
        if principals_of(line) != [pr_author.lower()]:
            problems.append(f"line added for {line.split()[0][:60]!r}: add lines only for yourself ({pr_author})")
        elif key_of(line) not in published:
            problems.append(
                f"line added with a key GitHub does not publish for {pr_author}: add the key to your GitHub "
                "account (Settings > SSH and GPG keys) or sign with one that is there"
            )
    return problems

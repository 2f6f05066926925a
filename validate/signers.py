"""The pull-request check of ``submissions/allowed_signers``: only the author's own, published keys added.

Lines are read exactly as the verifier reads them (:func:`ecocompute.schema.signing.parse_signers_line`), so a
key inside a quoted option, a second key after the first, or a wildcard principal cannot pass for a line
the verifier would use differently. Every added line must be usable, name the pull request's author alone and
carry one of the keys GitHub publishes for them (``https://github.com/<login>.keys``); no line may be removed
or changed.
"""

from __future__ import annotations

from collections import Counter

from ecocompute.schema.signing import LineProblem, PublicKey, iter_keys, parse_signers_line


def _meaningful(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def changed_lines(old_text: str, new_text: str) -> tuple[list[str], list[str]]:
    """(added, removed) meaningful lines between two versions of an allowed_signers file (as multisets)."""
    remaining = Counter(_meaningful(old_text))
    added = []
    for line in _meaningful(new_text):
        if remaining[line] > 0:
            remaining[line] -= 1
        else:
            added.append(line)
    removed = [line for line in _meaningful(old_text) if remaining[line] > 0 and not remaining.subtract([line])]
    return added, removed


def signer_problems(old_text: str, new_text: str, pr_author: str, published_keys_text: str) -> list[str]:
    """What is wrong with the pull request's change to allowed_signers (empty when nothing is)."""
    published: set[bytes] = {key.blob for key in iter_keys(published_keys_text)}
    added, removed = changed_lines(old_text, new_text)
    problems = [f"line removed or changed: {line[:120]} (only maintainers remove keys)" for line in removed]
    author = pr_author.lower()
    for line in added:
        parsed = parse_signers_line(line)
        if parsed is None:  # pragma: no cover - _meaningful drops blanks and comments
            continue
        if isinstance(parsed, LineProblem):
            problems.append(f"line added that the verifier cannot use: {line[:80]} ({parsed.reason})")
            continue
        if list(parsed.principals) != [author]:
            who = ",".join(parsed.principals)[:60]
            problems.append(f"line added for {who!r}: add lines only for yourself ({pr_author})")
        elif parsed.key.blob not in published:
            problems.append(
                f"line added with a {parsed.key.key_type} key GitHub does not publish for {pr_author} "
                f"({parsed.key.fingerprint}): add the key to your GitHub account (Settings > SSH and GPG keys) "
                "or sign with one that is there"
            )
    return problems


def published(published_keys_text: str) -> list[PublicKey]:
    """The keys of a ``.keys`` text that the verifier can use."""
    return list(iter_keys(published_keys_text))

"""How a request's name finds a catalog entry: its slug in any case, a GPU's name as its
datasheet writes it, a model's Hugging Face repositories (`hf_repo`, `instruct_repo`) or any of
their instruct, chat or base variants, or one of its `aliases`; and, for a name that finds
nothing, the nearest slugs to suggest."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

# The words a Hugging Face repository adds to a model's name for one of its variants (the
# instruction-tuned, chat or base release of the same architecture): the sizing is theirs alike.
VARIANT_WORDS = frozenset({"instruct", "it", "chat", "hf", "base"})
SUGGESTIONS = 3


def _key(name: str) -> str:
    """A name as a slug spells it: lowercase, words joined by hyphens."""
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def _variant_key(name: str) -> str:
    """A repository (org/name) or a model name without its org and variant words."""
    words = _key(name.rsplit("/", 1)[-1]).split("-")
    return "-".join(w for w in words if w not in VARIANT_WORDS)


def _model_keys(slug: str, spec: Any) -> Iterable[str]:
    yield _variant_key(slug)
    for repo in (getattr(spec, "hf_repo", None), getattr(spec, "instruct_repo", None)):
        if repo:
            yield _key(repo)
            yield _variant_key(repo)
    for alias in getattr(spec, "aliases", ()) or ():
        yield _key(alias)
        yield _variant_key(alias)
    if getattr(spec, "name", None):
        yield _variant_key(spec.name)


def _gpu_keys(slug: str, spec: Any) -> Iterable[str]:
    if getattr(spec, "name", None):
        yield _key(spec.name)


def resolve(entries: Mapping[str, Any], value: str, *, models: bool) -> str | None:
    """The slug `value` names in `entries` (slug -> spec): the slug itself, in any case; else
    the one entry whose other names (see the module) match it, or None when none or several
    do."""
    if value in entries:
        return value
    key = _key(value)
    by_case = [slug for slug in entries if slug.lower() == key]
    if len(by_case) == 1:
        return by_case[0]
    keys_of = _model_keys if models else _gpu_keys
    wanted = {key, _variant_key(value)} if models else {key}
    matches = {slug for slug, spec in entries.items() if wanted & set(keys_of(slug, spec))}
    return matches.pop() if len(matches) == 1 else None


def nearest(entries: Iterable[str], value: str) -> list[str]:
    """The slugs closest to `value`, best first (difflib's ratio on the slug spelling)."""
    slugs = list(entries)
    key = _variant_key(value)
    scored = sorted(slugs, key=lambda s: -difflib.SequenceMatcher(None, key, s.lower()).ratio())
    return scored[:SUGGESTIONS]

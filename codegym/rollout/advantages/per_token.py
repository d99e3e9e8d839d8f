"""Per-token advantages: diff anchors projected on the sampled tokens, plus episode and step terms.

`project_to_tokens` gives each token of a step's response the advantage of the
highest-GS anchor whose unit span covers it (spans are characters of the action
text, mapped to the sampled ``response_ids`` with `codegym.rollout.tokens`, or kept
as characters when a step has no ids); `token_advantages` adds the episode advantage
and, optionally, the step advantage: ``episode + lam * diff + omega * step``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from codegym.rollout.advantages.diffs import DiffAnchors, diff_anchor_advantages
from codegym.rollout.advantages.outcome import field_of
from codegym.rollout.advantages.steps import steps_of
from codegym.rollout.tokens import span_to_token_range, token_char_offsets


def _step_offsets(step: Any, ids: Sequence[int], decode: Any) -> list[tuple[int, int]]:
    """Char offsets of the step's response tokens (`ids`)."""
    info = field_of(step, "info", None) or {}
    pre = info.get("token_char_offsets") if isinstance(info, Mapping) else None
    if pre is not None and len(pre) == len(ids):
        return [(int(a), int(b)) for a, b in pre]
    if decode is None:
        raise ValueError(
            "steps carry response_ids: pass decode= (a tokenizer or callable) so that unit spans can be "
            "mapped to tokens"
        )
    return token_char_offsets(ids, decode, text=str(field_of(step, "action", "") or ""))


def project_to_tokens(
    trajectories: Sequence[Any], anchors: DiffAnchors, decode: Any = None
) -> list[list[np.ndarray]]:
    """Per trajectory, per step: diff advantages aligned with the step's ``response_ids``
    (or with the characters of its action text when it has no ids).

    A token takes the advantage of the highest-GS anchor with a member unit whose span
    overlaps it (ties: the anchor selected first); other tokens get 0.
    """
    # (anchor, span, advantage) of the occurrences that have both, by step
    by_step: dict[tuple[int, int], list[tuple[int, tuple[int, int], float]]] = defaultdict(list)
    for o in anchors.occurrences:
        if o.anchor is not None and o.span is not None:
            by_step[(o.traj, o.step)].append((o.anchor, o.span, o.advantage))
    out: list[list[np.ndarray]] = []
    for ti, traj in enumerate(trajectories):
        per_step: list[np.ndarray] = []
        for si, step in enumerate(steps_of(traj)):
            occ = by_step.get((ti, si), [])
            # Paint lowest priority first so that the highest-GS anchor wins.
            occ.sort(key=lambda o: (anchors.anchors[o[0]].gs, -o[0]))
            ids = field_of(step, "response_ids")
            if ids is None:
                # No sampled ids: one value per character of the action text.
                arr = np.zeros(len(str(field_of(step, "action", "") or "")), dtype=np.float64)
                for _anchor, span, advantage in occ:
                    a, b = max(0, span[0]), min(arr.shape[0], span[1])
                    if b > a:
                        arr[a:b] = advantage
            else:
                arr = np.zeros(len(ids), dtype=np.float64)
                offsets = _step_offsets(step, ids, decode) if occ else []
                for _anchor, span, advantage in occ:
                    a, b = span_to_token_range(offsets, span)
                    if b > a:
                        arr[a:b] = advantage
            per_step.append(arr)
        out.append(per_step)
    return out


def token_advantages(
    trajectories: Sequence[Any],
    episode_adv: Any,
    lam: float = 1.0,
    decode: Any = None,
    *,
    anchors: DiffAnchors | None = None,
    step_adv: Sequence[Any] | None = None,
    omega: float = 1.0,
    **anchor_kw: Any,
) -> list[list[np.ndarray]]:
    """Final per-token advantages: ``episode_adv[i] + lam * diff + omega * step_adv[i][t]``.

    ``episode_adv``: one value per trajectory (e.g. :func:`grpo`). The diff term comes from
    ``anchors`` or :func:`diff_anchor_advantages` (``**anchor_kw``: key, eta, s0, g0, cap,
    gamma ...); ``step_adv`` (optional) from :func:`step_anchor_advantages`. Each array is
    aligned with the step's ``response_ids`` (characters of the action when none).
    """
    ep = np.asarray(episode_adv, dtype=np.float64).reshape(-1)
    if ep.shape[0] != len(trajectories):
        raise ValueError(f"episode_adv has {ep.shape[0]} values for {len(trajectories)} trajectories")
    if anchors is None:
        anchors = diff_anchor_advantages(trajectories, **anchor_kw)
    elif anchor_kw:
        raise TypeError("give either anchors= or anchor parameters, not both")
    diff = project_to_tokens(trajectories, anchors, decode)
    out: list[list[np.ndarray]] = []
    for ti, steps in enumerate(diff):
        row = []
        for si, d in enumerate(steps):
            v = ep[ti] + lam * d
            if step_adv is not None:
                v = v + omega * float(np.asarray(step_adv[ti], dtype=np.float64)[si])
            row.append(v)
        out.append(row)
    return out

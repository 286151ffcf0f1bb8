# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's answer from the plan step (node_plan), read one way by every role: an answer that is
missing or failed is no answer, so the role asks its own check, which fails with its own message.

Documentation lives beside this file, one YAML file per filter.
"""

from __future__ import annotations

from collections.abc import Mapping


def plan_answer(plan, name):
    """The answer named ``name`` in a registered node_plan result, or None."""
    answers = plan.get("answers") if isinstance(plan, Mapping) else None
    answer = answers.get(name) if isinstance(answers, Mapping) else None
    if not isinstance(answer, Mapping) or answer.get("failed"):
        return None
    return answer


class FilterModule:
    def filters(self):
        return {"plan_answer": plan_answer}

"""Conventions every command shares, defined once.

Evidence labels: every finding states its source, with a machine label and the name a reader sees. Kernel
evidence also has a tier: ``registered`` (an XNNPACK log shows the kernel was set up) or ``executed`` (an
ETDump shows an operator of that datatype path ran).
"""

from __future__ import annotations

EVIDENCE_NAMES = {
    "etdump": "ETDump timeline",
    "timeline_csv": "timeline CSV",
    "ops_stats": "ops-stats CSV",
    "metrics_json": "metrics JSON",
    "xnntrace": "xnntrace log",
    "validate": "run-folder validation",
    "anemll_json": "anemll-profile JSON",
    "costplan_json": "ane-costplan JSON",
    "mil_static": "Core ML model (static)",
}


def evidence_name(label: str) -> str:
    """The reader's name of an evidence label; ``a+b`` (a finding resting on two sources) names both."""
    return " + ".join(EVIDENCE_NAMES.get(part, part) for part in label.split("+"))

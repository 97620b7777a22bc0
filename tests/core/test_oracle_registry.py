"""Every JSON document edgeprof prints has an oracle test that names each of its keys: a document type added to
`edgeprof.documents.DOCUMENTS`, or a field added to one, fails here until the oracle of that kind checks it. (Each
oracle also asserts the exact key set of a real document of its kind, so a key it names is a key it checks.)"""

from __future__ import annotations

import re

import pytest
from testdata import ROOT

from edgeprof.documents import DOCUMENTS
from edgeprof.documents_base import _spec

ORACLES = {  # document type → the test file that checks every key of it against an independent computation
    "AnalysisSummaryDoc": "tests/cli/test_analysis_summary_oracle.py",
    "LatencyDoc": "tests/cli/test_latency_json_oracle.py",
    "LatencyReportsDoc": "tests/cli/test_collections_json_oracle.py",
    "ComparisonDoc": "tests/cli/test_compare_json_oracle.py",
    "BreakdownDoc": "tests/cli/test_breakdown_json_oracle.py",
    "BreakdownsDoc": "tests/cli/test_collections_json_oracle.py",
    "KernelsDoc": "tests/cli/test_kernels_json_oracle.py",
    "KernelLogsDoc": "tests/cli/test_kernels_json_oracle.py",
    "ExecutedKernelsDoc": "tests/cli/test_kernels_json_oracle.py",
    "KernelViewDoc": "tests/cli/test_kernels_json_oracle.py",
    "ValidationDoc": "tests/cli/test_folder_json_oracle.py",
    "ExampleDoc": "tests/cli/test_folder_json_oracle.py",
    "SkillsDoc": "tests/cli/test_folder_json_oracle.py",
    "AneAnalysisDoc": "tests/analysis/test_ane_json_oracle.py",
    "AnePlanDoc": "tests/analysis/test_ane_json_oracle.py",
    "AneDiffDoc": "tests/analysis/test_ane_json_oracle.py",
    "AnePlanDiffDoc": "tests/analysis/test_ane_json_oracle.py",
    "AneFolderDoc": "tests/analysis/test_ane_json_oracle.py",
    "ReportDoc": "tests/render/test_report_json_oracle.py",
    "TraceDoc": "tests/cli/test_trace_oracle.py",
    "CollectionDoc": "tests/cli/test_collection_json_oracle.py",
    "PlanDoc": "tests/cli/test_plan_json_oracle.py",
    "IngestDoc": "tests/store/test_store_json_oracle.py",
    "ExportDoc": "tests/store/test_store_json_oracle.py",
    "HistoryDoc": "tests/analysis/test_history_json_oracle.py",
    "CoremlStaticDoc": "tests/coreml/test_coreml_json_oracle.py",
    "CoremlDiffDoc": "tests/coreml/test_coreml_json_oracle.py",
    "ProgramDoc": "tests/pte/test_program_json_oracle.py",
    "ProgramDiffDoc": "tests/pte/test_program_json_oracle.py",
    "PhasesDoc": "tests/llm/test_phases_json_oracle.py",
    "PhaseComparisonDoc": "tests/llm/test_phase_comparison_json_oracle.py",
    "NumericsDoc": "tests/cli/test_numerics_json_oracle.py",
    "PlacementDoc": "tests/analysis/test_placement_json_oracle.py",
    "PlacementDiffDoc": "tests/analysis/test_placement_json_oracle.py",
    "MemoryDoc": "tests/analysis/test_memory_collect.py",
}
TYPES = {t.__name__: t for shapes in DOCUMENTS.values() for t in shapes}


def test_every_document_type_has_an_oracle():
    assert sorted(TYPES) == sorted(ORACLES), "a document type needs an oracle test listed here"


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_the_oracle_names_every_field(name):
    text = (ROOT / ORACLES[name]).read_text()
    assert re.search(r"def test_every_key", text), ORACLES[name]
    missing = [f for f in _spec(TYPES[name]).names if f'"{f}"' not in text]
    assert not missing, f"{ORACLES[name]} does not check {missing} of {name}"

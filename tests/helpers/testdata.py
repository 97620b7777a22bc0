"""Where the test data is, and what it holds."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
ETDUMP_NAMES = sorted(p.name[: -len(".etdp.gz")] for p in (DATA / "etdump").glob("*.etdp.gz"))
ETRECORD_MODELS = ("toycnn_portable", "toycnn_xnn", "toycnn_xnnq8", "tel_portable", "tel_xnn", "tel_xnnq8")

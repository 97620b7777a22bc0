from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data" / "coreml"
PACKAGES = sorted(p.name[: -len(".mlpackage")] for p in DATA.glob("*.mlpackage"))
SAMPLES = {"conv_palettized4_ios16": "sample_conv_palettized4_ios16.model.mil.txt",
           "int32_kvcache_state_ios18": "sample_int32_kvcache_state_ios18.model.mil.txt"}


def package(name: str) -> Path:
    return DATA / f"{name}.mlpackage"


def weight_file(name: str) -> Path:
    return package(name) / "Data" / "com.apple.CoreML" / "weights" / "weight.bin"


@pytest.fixture
def compiled(tmp_path):
    """A ``.mlmodelc`` folder made of a model.mil text sample and its package's weight file."""
    def make(name: str, text: str | None = None, weights: bytes | None = None) -> Path:
        d = tmp_path / f"{name}.mlmodelc"
        (d / "weights").mkdir(parents=True)
        (d / "model.mil").write_text(text if text is not None else (DATA / SAMPLES[name]).read_text())
        if weights is None:
            shutil.copy(weight_file(name), d / "weights" / "weight.bin")
        else:
            (d / "weights" / "weight.bin").write_bytes(weights)
        return d
    return make


def require_coremltools():
    """coremltools (the ``coreml`` extra): an oracle for some tests. CI sets EDGEPROF_REQUIRE_COREML=1, so there a
    missing install fails instead of skipping."""
    try:
        import coremltools  # noqa: F401
    except ImportError:
        if os.environ.get("EDGEPROF_REQUIRE_COREML"):
            raise RuntimeError("EDGEPROF_REQUIRE_COREML is set but coremltools is not installed "
                               "(pip install '.[coreml]')") from None
        pytest.skip("coremltools (the coreml extra) is not installed")

"""Find and read Core ML bundles: ``.mlpackage`` (protobuf, via the coreml extra), ``.mlmodelc`` (``model.mil``
text, no extra), a single ``.mlmodel``, or a folder of them (one program per submodel, in name order).

Weight references (``BLOBFILE``) are resolved against the bundle's ``weights/`` folder and every record is
validated, so a missing or truncated ``weight.bin`` is reported here, naming the file and the byte offset.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..mil_model import MilProgram
from .. import access
from ..files import exists, is_dir, is_file, read_text
from .milblob import read_records
from .mlpackage import CoreMLBundleError

BUNDLE_SUFFIXES = (".mlpackage", ".mlmodelc", ".mlmodel")
MAX_MIL_BYTES = 1 << 30  # model.mil text (tens of MB for the largest LLMs)


def is_bundle(path: Path) -> bool:
    return path.suffix in BUNDLE_SUFFIXES or (is_dir(path) and (is_file(path / "Manifest.json")
                                                               or is_file(path / "model.mil")))


def find_bundles(path) -> list[Path]:
    """The bundle itself, or the bundles directly inside a folder (sorted by name)."""
    path = Path(path)
    access.check(path)
    if not exists(path):
        raise InputError(path, "no such file or folder")
    if is_bundle(path):
        return [path]
    if is_dir(path):
        found = sorted(p for p in path.iterdir() if is_bundle(p))
        if found:
            return found
    raise CoreMLBundleError(path, "not a Core ML bundle (.mlpackage, .mlmodelc or .mlmodel) nor a folder holding one")


def read_bundle(path) -> MilProgram:
    path = Path(path)
    access.check(path)
    if path.suffix == ".mlpackage" or (is_dir(path) and is_file(path / "Manifest.json")):
        if not is_dir(path):
            raise CoreMLBundleError(path, "an .mlpackage must be a folder (a zipped package? unzip it first)")
        from .mlpackage import program_from_spec, read_spec, spec_path

        spec_file = spec_path(path)
        prog = program_from_spec(read_spec(spec_file), str(path))
        base = spec_file.parent
    elif path.suffix == ".mlmodelc" or (is_dir(path) and is_file(path / "model.mil")):
        if not is_dir(path):
            raise CoreMLBundleError(path, "an .mlmodelc must be a folder")
        from .mil_text import parse_mil_text

        mil = path / "model.mil"
        if not os.path.lexists(mil):
            raise CoreMLBundleError(path, "no model.mil in the compiled model (a neural-network model? only ML "
                                          "Programs have one)")
        text = read_text(mil, MAX_MIL_BYTES, "model.mil", CoreMLBundleError)
        prog = parse_mil_text(text, mil)
        prog.source = str(path)
        base = path
    elif path.suffix == ".mlmodel" and is_file(path):
        from .mlpackage import program_from_spec, read_spec

        prog = program_from_spec(read_spec(path), str(path))
        base = path.parent
    else:
        raise CoreMLBundleError(path, "not a Core ML bundle")
    resolve_weights(prog, base, path)
    return prog


def _weight_path(ref: str, base: Path, bundle: Path) -> Path:
    """``@model_path/weights/weight.bin`` → the file inside the bundle; anything reaching outside it is refused."""
    rel = ref[len("@model_path/"):] if ref.startswith("@model_path/") else None
    if not rel or "\0" in rel or any(part in ("", ".", "..") for part in rel.split("/")):
        raise CoreMLBundleError(bundle, f"weight reference '{ref[:80]}' does not name a file inside the bundle")
    f = base / rel
    if not os.path.realpath(f).startswith(os.path.realpath(base) + os.sep):
        raise CoreMLBundleError(bundle, f"weight reference '{ref[:80]}' leads outside the bundle")
    return f


def resolve_weights(prog: MilProgram, base: Path, bundle: Path) -> None:
    """Fill every blob reference with its record (dtype, stored size, data offset), one read per record."""
    by_file: dict[str, list] = {}
    for blob in prog.blobs():
        by_file.setdefault(blob.path, []).append(blob)
    for ref, blobs in by_file.items():
        f = _weight_path(ref, base, bundle)
        records = read_records(f, [b.offset for b in blobs])
        prog.weight_files[ref] = f.stat().st_size
        for b in blobs:
            b.dtype, b.size, b.data_offset = records[b.offset]

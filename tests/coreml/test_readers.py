"""Core ML readers: the model.mil text parser, the MILBlob record reader and the .mlpackage reader agree with
each other and with coremltools, and bad bundles are one-line errors naming the file."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest

from edgeprof.errors import InputError
from edgeprof.io.coreml import find_bundles, read_bundle
from edgeprof.io.mil_text import MilTextError, parse_mil_text
from edgeprof.io.milblob import read_records

from .conftest import DATA, PACKAGES, SAMPLES, package, weight_file


def _table(prog):
    """Everything the analyses read of an op, in a comparable form (blob refs by offset and record)."""
    rows = []
    for op in prog.all_ops():
        def val(v):
            return (v.type.text(), (v.blob.offset, v.blob.dtype, v.blob.size) if v.blob else repr(v.value))
        rows.append((op.function, op.index, op.type, op.name, [(n, t.text()) for n, t in op.outputs],
                     {p: [a.name or val(a.value) for a in args] for p, args in op.inputs.items()},
                     {k: val(v) for k, v in op.attrs.items()}))
    return rows


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_model_mil_text_parses_to_the_same_op_table_as_its_package(name, compiled):
    text = read_bundle(compiled(name))
    pkg = read_bundle(package(name))
    assert text.form == "mlmodelc" and pkg.form == "mlpackage"
    assert list(text.functions) == list(pkg.functions)
    for f in text.functions:
        assert [(n, t.text()) for n, t in text.functions[f].inputs] == [(n, t.text()) for n, t in pkg.functions[f].inputs]
        assert text.functions[f].outputs == pkg.functions[f].outputs
    assert _table(text) == _table(pkg)
    assert len(_table(pkg)) == pkg.n_ops > 20


def test_real_compiler_lines_parse():
    """Lines as Apple's compiler writes them (both spellings; an iOS18 inline BLOBFILE operand; hex floats)."""
    text = """program(1.0)
[buildInfo = dict<tensor<string, []>, tensor<string, []>>({{"coremlc-version", "3400.43.1"}})]
{
    func main<ios17>(tensor<fp32, [1, 6272]> x, tensor<fp16, [?, 8]> y) {
            tensor<fp16, [5, 6272]> w = const()[name = tensor<string, []>("w"), val = tensor<fp16, [5, 6272]>(BLOBFILE(path = tensor<string, []>("@model_path/weights/weight.bin"), offset = tensor<uint64, []>(576)))];
            fp16 s = const()[name = string("s"), val = fp16(0x1.99p-4)];
            tensor<fp16, [1, 5]> out = linear(weight = w, x = x)[name = string("out")];
            tensor<fp16, [4, 4]> d = constexpr_sparse_to_dense(mask = tensor<uint1, [4, 4]>(BLOBFILE(path = string("@model_path/weights/weight.bin"), offset = uint64(64))), nonzero_data = tensor<fp16, [8]>([0x1p+0, 2, 3, 4, 5, 6, 7, -inf]))[name = string("d")];
    } -> (out);
}
"""  # noqa: E501 - the compiler's lines as it writes them
    prog = parse_mil_text(text, "model.mil")
    ops = prog.functions["main"].ops
    assert [o.type for o in ops] == ["const", "const", "linear", "constexpr_sparse_to_dense"]
    assert ops[0].attrs["val"].blob.offset == 576 and ops[0].outputs[0][1].shape == (5, 6272)
    assert ops[1].attrs["val"].value == (1 + 0x99 / 256) / 16
    assert ops[3].inputs["mask"][0].value.blob.offset == 64
    assert ops[3].inputs["nonzero_data"][0].value.value[-1] == float("-inf")
    assert prog.functions["main"].inputs[1][1].shape == ("?", 8) and not prog.functions["main"].inputs[1][1].is_static


@pytest.mark.parametrize("bad, line, what", [
    ("program(1.3)\n{\n func main<ios18>(tensor<fp16, [1]> x) {\n  tensor<fp16, [1]> y = relu(x = x)[name = string(\"y\")]\n"
     " } -> (y);\n}\n", 5, "';'"),
    ("program(1.3)\n{\n func main<ios18>(tensor<fp16, [1, x> x) {\n } -> ();\n}\n", 3, "expected ']', found '>'"),
    ("program(1.3)\n{\n func main(tensor<fp16, [1]> x) {\n  y = relu(x = x)[];\n } -> (y);\n}\n", 4, ""),
    ("progrm(1.3) {}", 1, "'program'"),
    ("program(1.3)\n{\n}\n", None, "no function"),
    ("program(1.3)\n{\n func main<ios18>() {\n  tensor<fp16, [1]> y = const()[val = tensor<fp16, [1]>(BLOBFILE("
     "path = string(\"w\")))];\n } -> (y);\n}", 4, "BLOBFILE"),
    ("program(1.3)\n{ func main<ios18>() { } -> (); func main<ios18>() { } -> (); }", 2, "defined twice"),
    ("program(1.3)\n{\n func main<ios18>() {\n  \x00\n", 4, "unexpected character"),
])
def test_garbled_model_mil_is_one_line_with_its_line_number(bad, line, what):
    with pytest.raises(MilTextError) as e:
        parse_mil_text(bad, "x.mlmodelc/model.mil")
    msg = str(e.value)
    assert msg.startswith("x.mlmodelc/model.mil: ") and "\n" not in msg
    assert what in msg
    assert (f"(line {line})" in msg) if line else "line" not in msg


def test_weight_records_match_the_file_layout_for_every_fixture():
    """Oracle: the weight file's own size. After a 64-byte header, each blob is a 64-byte record followed by its
    data, the next record at the next 64-byte boundary; the last data ends the file. So the records the reader
    returns must tile every byte of the file."""
    for name in PACKAGES:
        prog = read_bundle(package(name))
        blobs = sorted({(b.path, b.offset): b for b in prog.blobs()}.values(), key=lambda b: b.offset)
        at = 64
        for b in blobs:
            assert b.offset == at and b.data_offset == b.offset + 64, (name, b.offset)
            at = -(-(b.data_offset + b.size) // 64) * 64
        assert os.path.getsize(weight_file(name)) == blobs[-1].data_offset + blobs[-1].size, name
        # the header's blob count is the number of distinct records the program references
        with open(weight_file(name), "rb") as f:
            assert struct.unpack("<II", f.read(8)) == (len(blobs), 2)


def test_blob_dtypes_agree_with_the_mil_types():
    """The record's dtype (MILBlob codes) and the MIL tensor type (the program's) are two independent spellings."""
    seen = set()
    for name in PACKAGES:
        for op in read_bundle(package(name)).all_ops():
            vals = list(op.attrs.values()) + [a.value for args in op.inputs.values() for a in args if a.value is not None]
            for v in vals:
                if v.blob is not None:
                    assert v.blob.dtype == v.type.dtype, (name, op.name)
                    seen.add(v.blob.dtype)
    assert {"fp16", "uint8", "int8", "uint4", "uint1", "int4", "fp32"} <= seen


def _bundle_error(path) -> str:
    with pytest.raises(InputError) as e:
        read_bundle(path) if not os.path.isdir(path) or path.suffix else find_bundles(path)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_bad_bundles_are_one_line_errors(tmp_path, compiled):
    name = "conv_palettized4_ios16"
    w = weight_file(name).read_bytes()
    # a missing weight file, a truncated one, a lying record
    d = compiled(name)
    os.remove(d / "weights" / "weight.bin")
    msg = _bundle_error(d)
    assert "weight.bin" in msg and "no such file" in msg
    d2 = tmp_path / "t"
    d2.mkdir()
    (d2 / "model.mlmodelc" / "weights").mkdir(parents=True)
    (d2 / "model.mlmodelc" / "model.mil").write_text((DATA / SAMPLES[name]).read_text())
    (d2 / "model.mlmodelc" / "weights" / "weight.bin").write_bytes(w[:20000])
    msg = _bundle_error(d2 / "model.mlmodelc")
    assert "weight.bin" in msg and "past the end" in msg and "byte offset" in msg
    bad = bytearray(w)
    bad[640:644] = struct.pack("<I", 0x12345678)
    (d2 / "model.mlmodelc" / "weights" / "weight.bin").write_bytes(bytes(bad))
    msg = _bundle_error(d2 / "model.mlmodelc")
    assert "no blob record at offset 640" in msg and "(at byte offset 640)" in msg
    with pytest.raises(InputError, match="not a MILBlob v2"):
        bad[4:8] = struct.pack("<I", 3)
        (d2 / "x.bin").write_bytes(bytes(bad))
        read_records(d2 / "x.bin", [64])
    # a zip posing as a package, a folder without a manifest, a damaged specification
    z = tmp_path / "model.mlpackage"
    z.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    assert "must be a folder" in _bundle_error(z)
    (tmp_path / "empty.mlpackage").mkdir()
    assert "no Manifest.json" in _bundle_error(tmp_path / "empty.mlpackage")
    import shutil
    broken = tmp_path / "broken.mlpackage"
    shutil.copytree(package(name), broken)
    spec = broken / "Data" / "com.apple.CoreML" / "model.mlmodel"
    spec.write_bytes(spec.read_bytes()[:333])
    msg = _bundle_error(broken)
    assert "model.mlmodel" in msg and "not a Core ML model specification" in msg
    # garbled model.mil: the file and the line
    g = compiled("int32_kvcache_state_ios18", text=(DATA / SAMPLES["int32_kvcache_state_ios18"]).read_text().replace(
        "= read_state(", "= read_state[", 1))
    msg = _bundle_error(g)
    assert "model.mil" in msg and "(line " in msg
    # neither a bundle nor a folder of them
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("x")
    assert "not a Core ML bundle" in _bundle_error(tmp_path / "notes")


def test_a_folder_of_bundles_is_one_program_per_submodel_in_name_order(tmp_path):
    import shutil
    for n, src in (("llama_prefill", "attention_block_ios17"), ("llama_embeddings", "int32_gather_fp32prec_ios17"),
                   ("llama_lm_head", "conv_relu_linear_ios18")):
        shutil.copytree(package(src), tmp_path / f"{n}.mlpackage")
    (tmp_path / "README.txt").write_text("not a model")
    assert [p.name for p in find_bundles(tmp_path)] == ["llama_embeddings.mlpackage", "llama_lm_head.mlpackage",
                                                        "llama_prefill.mlpackage"]


def test_the_package_reader_does_not_import_coremltools():
    """coremltools' import is slow and noisy (it imports torch when present): only its proto modules are loaded."""
    code = ("import sys; from edgeprof.io.coreml import read_bundle; p = read_bundle(sys.argv[1]); "
            "print(p.n_ops, 'coremltools' in sys.modules, 'torch' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code, str(package("conv_int8_ios16"))], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["26", "False", "False"] and r.stderr == ""


@pytest.mark.missing_extra_expected
def test_missing_coreml_extra_is_one_line(monkeypatch):
    import importlib.util

    from edgeprof.errors import MissingExtraError
    from edgeprof.io import mlpackage

    monkeypatch.delitem(sys.modules, mlpackage._PROTO_NAME, raising=False)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "coremltools" else real(n, *a))
    with pytest.raises(MissingExtraError) as e:
        read_bundle(package("conv_int8_ios16"))
    assert "install edgeprof[coreml]" in str(e.value) and e.value.exit_code == 2


@pytest.mark.parametrize("ref, needle", [
    ("@model_path/weights/../../../etc/passwd", "does not name a file inside the bundle"),
    ("/etc/passwd", "does not name a file inside the bundle"),
    ("@model_path/weights/w\x00.bin", "does not name a file inside the bundle"),
    ("@model_path/link/weight.bin", "leads outside the bundle"),
])
def test_weight_references_stay_inside_the_bundle(compiled, tmp_path, ref, needle):
    name = "conv_palettized4_ios16"
    text = (DATA / SAMPLES[name]).read_text().replace('"@model_path/weights/weight.bin"', '"' + ref.replace("\x00", "\\0") + '"')
    if "\x00" in ref:
        text = (DATA / SAMPLES[name]).read_text().replace("@model_path/weights/weight.bin", ref)
    d = compiled(name, text=text)
    outside = tmp_path / "outside"
    outside.mkdir()
    (d / "link").symlink_to(outside)
    msg = _bundle_error(d)
    assert needle in msg and msg.startswith(str(d))

"""The ``model.mil`` text of a compiled Core ML model (``.mlmodelc``) → :class:`~edgeprof.mil_model.MilProgram`.

Grammar (as Apple's compiler writes it; both the ``program(1.0)`` spelling ``tensor<string, []>("x")`` and the
``program(1.3)`` spelling ``string("x")`` are accepted)::

    program   := "program" "(" VERSION ")" attrs? "{" function* "}"
    function  := "func" NAME "<" OPSET ">" "(" (type NAME),* ")" attrs? "{" stmt* "}" "->" "(" NAME,* ")" ";"
    stmt      := (type NAME),* "=" OP "(" args ")" attrs block* ";"   |   OP "(" args ")" attrs block* ";"
    block     := "{" stmt* "}" "->" "(" NAME,* ")"
    args      := (PARAM "=" (NAME | "(" NAME,* ")" | value)),*
    attrs     := "[" (KEY "=" value),* "]"
    value     := type "(" literal ")"        literal: number, string, bool, [..], {{..}}, BLOBFILE(path=…, offset=…)
    type      := DTYPE | "tensor" "<" DTYPE "," "[" dim,* "]" ">" | "state" "<" type ">" | NAME "<" … ">"

Every error is one line naming the file and the line.
"""

from __future__ import annotations

import re

from ..errors import InputError
from ..mil_model import DTYPE_BITS, MAX_DIM, MAX_RANK, Arg, Blob, Block, Function, MilProgram, MilType, Op, Value

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+|\#[^\n]*) |
    (?P<nl>\n) |
    (?P<str>"(?:[^"\\\n]|\\.)*") |
    (?P<num>[-+]?(?:0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][-+]?\d+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)(?![A-Za-z_0-9])) |
    (?P<name>[A-Za-z_@][A-Za-z0-9_.@]*) |
    (?P<arrow>->) |
    (?P<p>[()\[\]{}<>,=;?])
""", re.VERBOSE)


MAX_DEPTH = 32  # literals, types or blocks nested deeper than this are not a model


class MilTextError(InputError):
    """``model.mil`` text that does not follow the grammar."""


class _Tokens:
    def __init__(self, text: str, path):
        self.path = path
        self.toks: list[tuple[str, str, int]] = []
        line, pos, n = 1, 0, len(text)
        while pos < n:
            m = _TOKEN.match(text, pos)
            if m is None:
                raise MilTextError(path, f"unexpected character '{text[pos]}'", line=line)
            kind = m.lastgroup
            assert kind is not None  # every alternative of _TOKEN is a named group
            if kind == "nl":
                line += 1
            elif kind != "ws":
                self.toks.append((kind, m.group(), line))
            pos = m.end()
        self.toks.append(("eof", "", line))
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str, int]:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> tuple[str, str, int]:
        t = self.toks[self.i]
        if t[0] != "eof":
            self.i += 1
        return t

    def fail(self, what: str):
        kind, text, line = self.peek()
        got = "end of file" if kind == "eof" else f"'{text}'"  # (quoted, not repr: shown() escapes once)
        raise MilTextError(self.path, f"expected {what}, found {got}", line=line)

    def expect(self, text: str) -> tuple[str, str, int]:
        if self.peek()[1] != text or self.peek()[0] in ("str", "eof"):
            self.fail(f"'{text}'")
        return self.next()

    def accept(self, text: str) -> bool:
        if self.peek()[1] == text and self.peek()[0] not in ("str", "eof"):
            self.i += 1
            return True
        return False

    def name(self, what: str = "a name") -> str:
        if self.peek()[0] != "name":
            self.fail(what)
        return self.next()[1]


def _parse_type(t: _Tokens, depth: int = 0) -> MilType:
    if depth > MAX_DEPTH:
        raise MilTextError(t.path, f"type nested more than {MAX_DEPTH} deep", line=t.peek()[2])
    head = t.name("a type")
    if head == "tensor":
        t.expect("<")
        dtype = t.name("a data type")
        t.expect(",")
        shape = _parse_shape(t)
        t.expect(">")
        return MilType("tensor" if shape else "scalar", dtype, shape)  # rank 0 is a scalar, as in the protobuf
    if head == "state":
        t.expect("<")
        inner = _parse_type(t, depth + 1)
        t.expect(">")
        return MilType("state", inner.dtype, inner.shape, inner)
    if t.peek()[1] == "<":  # list<…>, dict<…>, tuple<…>: kept by kind
        depth = 0
        while True:
            tok = t.next()
            if tok[0] == "eof":
                t.fail("'>'")
            depth += (tok[1] == "<") - (tok[1] == ">")
            if depth == 0:
                break
        return MilType(head)
    return MilType("scalar", head)


def _parse_shape(t: _Tokens) -> tuple:
    t.expect("[")
    dims: list = []
    while not t.accept("]"):
        kind, text, _ = t.next()
        if kind == "num" and re.fullmatch(r"\d+", text):
            if len(text) > 12 or int(text) > MAX_DIM:
                raise MilTextError(t.path, f"dimension {text[:20]} is larger than {MAX_DIM}", line=t.peek()[2])
            dims.append(int(text))
        elif kind == "name" or text == "?":
            dims.append(text)  # a flexible / symbolic dimension
        else:
            t.i -= 1
            t.fail("a dimension")
        if len(dims) > MAX_RANK:
            raise MilTextError(t.path, f"a tensor of rank above {MAX_RANK}", line=t.peek()[2])
        if not t.accept(","):
            t.expect("]")
            break
    return tuple(dims)


def _parse_literal(t: _Tokens, depth: int = 0):
    kind, text, line = t.peek()
    if depth > MAX_DEPTH:
        raise MilTextError(t.path, f"literal nested more than {MAX_DEPTH} deep", line=line)
    if kind == "num":
        t.next()
        try:
            return _number(text)
        except (OverflowError, ValueError):
            raise MilTextError(t.path, f"number '{text[:40]}' cannot be represented", line=line) from None
    if kind == "str":
        t.next()
        return bytes(text[1:-1], "utf-8").decode("unicode_escape", errors="replace") if "\\" in text else text[1:-1]
    if kind == "name" and text in ("true", "false"):
        t.next()
        return text == "true"
    if kind == "name" and text == "BLOBFILE":
        t.next()
        t.expect("(")
        fields: dict[str, object] = {}
        while not t.accept(")"):
            key = t.name("'path' or 'offset'")
            t.expect("=")
            fields[key] = _parse_value(t).value
            if not t.accept(","):
                t.expect(")")
                break
        path, offset = fields.get("path"), fields.get("offset")
        if not isinstance(path, str) or not isinstance(offset, int):
            raise MilTextError(t.path, "BLOBFILE needs a string path and an integer offset", line=t.peek()[2])
        return Blob(path, offset)
    if text in ("[", "{"):
        close = "]" if text == "[" else "}"
        t.next()
        items = []
        while not t.accept(close):
            items.append(_parse_literal(t, depth + 1))
            if not t.accept(","):
                t.expect(close)
                break
        return items
    t.fail("a literal")


def _number(text: str):
    low = text.lower()
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if "0x" in low:
        return float.fromhex(text)
    return float(text)


def _parse_value(t: _Tokens) -> Value:
    typ = _parse_type(t)
    t.expect("(")
    lit = _parse_literal(t) if t.peek()[1] != ")" else None
    t.expect(")")
    if isinstance(lit, Blob):
        return Value(typ, None, lit)
    return Value(typ, lit)


def _is_value_start(t: _Tokens) -> bool:
    kind, text, _ = t.peek()
    if kind != "name":
        return False
    nxt = t.peek(1)[1]
    return (text in DTYPE_BITS and nxt == "(") or (text in ("tensor", "state", "list", "dict", "tuple") and nxt == "<")


def _parse_attrs(t: _Tokens) -> dict[str, Value]:
    attrs: dict[str, Value] = {}
    if not t.accept("["):
        return attrs
    while not t.accept("]"):
        key = t.name("an attribute name")
        t.expect("=")
        attrs[key] = _parse_value(t)
        if not t.accept(","):
            t.expect("]")
            break
    return attrs


def _parse_args(t: _Tokens) -> dict[str, list[Arg]]:
    args: dict[str, list[Arg]] = {}
    t.expect("(")
    while not t.accept(")"):
        param = t.name("a parameter name")
        t.expect("=")
        if t.accept("("):
            names = []
            while not t.accept(")"):
                names.append(Arg(value=_parse_value(t)) if _is_value_start(t) else Arg(name=t.name("a variable")))
                if not t.accept(","):
                    t.expect(")")
                    break
            args[param] = names
        elif _is_value_start(t):
            args[param] = [Arg(value=_parse_value(t))]
        else:
            args[param] = [Arg(name=t.name("a variable or a value"))]
        if not t.accept(","):
            t.expect(")")
            break
    return args


def _parse_names(t: _Tokens) -> list[str]:
    t.expect("(")
    out = []
    while not t.accept(")"):
        out.append(t.name("an output name"))
        if not t.accept(","):
            t.expect(")")
            break
    return out


def _parse_body(t: _Tokens, function: str, depth: int = 0) -> list[Op]:
    ops: list[Op] = []
    if depth > MAX_DEPTH:
        raise MilTextError(t.path, f"blocks nested more than {MAX_DEPTH} deep", line=t.peek()[2])
    t.expect("{")
    while not t.accept("}"):
        line = t.peek()[2]
        outputs: list[tuple[str, MilType]] = []
        if t.peek(1)[1] != "(":  # typed outputs before '='
            while True:
                typ = _parse_type(t)
                outputs.append((t.name("an output name"), typ))
                if not t.accept(","):
                    break
            t.expect("=")
        op_type = t.name("an operation")
        inputs = _parse_args(t)
        attrs = _parse_attrs(t)
        blocks = []
        while t.peek()[1] == "{":
            body = _parse_body(t, function, depth + 1)
            t.expect("->")
            blocks.append(Block(body, _parse_names(t)))
        t.expect(";")
        name_v = attrs.pop("name", None)
        name = name_v.value if name_v is not None and isinstance(name_v.value, str) else (outputs[0][0] if outputs else op_type)
        ops.append(Op(len(ops), function, op_type, name, outputs, inputs, attrs, blocks, line))
    return ops


def parse_mil_text(text: str, path="<memory>") -> MilProgram:
    """Parse ``model.mil`` text. Raises :class:`MilTextError` (one line, with the line number)."""
    t = _Tokens(text, path)
    if t.name("'program'") != "program":
        t.i -= 1
        t.fail("'program'")
    t.expect("(")
    kind, version, _ = t.next()
    if kind != "num":
        t.i -= 1
        t.fail("a program version")
    t.expect(")")
    attrs = {k: v.value for k, v in _parse_attrs(t).items()}
    t.expect("{")
    functions: dict[str, Function] = {}
    while not t.accept("}"):
        func_line = t.peek()[2]
        if t.name("'func'") != "func":
            t.i -= 1
            t.fail("'func'")
        fname = t.name("a function name")
        opset = ""
        if t.accept("<"):
            opset = t.name("an opset")
            t.expect(">")
        t.expect("(")
        inputs = []
        while not t.accept(")"):
            typ = _parse_type(t)
            inputs.append((t.name("an input name"), typ))
            if not t.accept(","):
                t.expect(")")
                break
        _parse_attrs(t)
        ops = _parse_body(t, fname)
        t.expect("->")
        outputs = _parse_names(t)
        t.expect(";")
        if fname in functions:
            raise MilTextError(path, f"function '{fname}' is defined twice", line=func_line)
        functions[fname] = Function(fname, opset, inputs, ops, outputs)
    if t.peek()[0] != "eof":
        t.fail("end of file")
    if not functions:
        raise MilTextError(path, "the program has no function")
    return MilProgram(str(path), "mlmodelc", version, functions, attrs=attrs)

"""Mutants of one Python module: small AST edits, enumerated in a fixed order.

Operators (each at one place at a time):
  comparisons   <→<=, <=→<, >→>=, >=→>, ==→!=, !=→==, is→is not, is not→is, in→not in, not in→in
  arithmetic    +→-, -→+, *→/, /→*, //→*, %→//, **→*, &→|, |→&, ^→&, <<→>>, >>→<< (also in x op= y)
  boolean       and→or, or→and, `not x`→x, `-x`→x
  constants     integer n→n+1, float x→2x (0.0→1.0), True↔False
  strings       'text'→'XXtextXX', only in modules whose strings are rules (taxonomy patterns, kernel tokens)

Left alone: docstrings, annotations, f-strings (message text), decorators and assert statements (internal checks).
A mutant's key names the module, the enclosing function, the edit and a hash of the source line, so the list of
equivalent mutants survives edits elsewhere in the file.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass

CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
       ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
       ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd, ast.BitXor: ast.BitAnd,
       ast.LShift: ast.RShift, ast.RShift: ast.LShift}
SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is",
          ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
          ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|",
          ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.And: "and", ast.Or: "or"}


@dataclass(frozen=True)
class Mutant:
    module: str
    index: int          # position in the module's enumeration
    line: int
    end_line: int
    scope: str          # enclosing function or class ("<module>" at top level)
    edit: str           # e.g. "`<` → `<=`"
    key: str            # stable name for the list of equivalent mutants


def _mutate_constant(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return 1.0 if value == 0 else value * 2
    return None


class _Walker:
    """Walks a module in a fixed order; lists mutation points, or applies the one at ``target``."""

    def __init__(self, strings: bool, target: int | None = None):
        self.strings, self.target = strings, target
        self.points: list[tuple[int, int, str, str]] = []  # (line, end_line, scope, edit)
        self.scope: list[str] = []
        self.applied = False

    def _point(self, node: ast.AST, edit: str) -> bool:
        """Register a point; True when it is the one to apply."""
        self.points.append((node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno,
                            ".".join(self.scope) or "<module>", edit))
        hit = self.target is not None and len(self.points) - 1 == self.target
        self.applied |= hit
        return hit

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.JoinedStr, ast.Assert)):
            return node
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node  # docstring or bare string
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.scope.append(node.name)
            skip = {"decorator_list", "returns"}
            for field, value in ast.iter_fields(node):
                if field in skip:
                    continue
                self._visit_field(node, field, value)
            self.scope.pop()
            return node
        if isinstance(node, ast.arg):
            return node  # annotations only
        if isinstance(node, ast.AnnAssign):
            node.target = self.visit(node.target)
            if node.value is not None:
                node.value = self.visit(node.value)
            return node
        for field, value in ast.iter_fields(node):
            self._visit_field(node, field, value)
        return self._here(node)

    def _visit_field(self, node, field, value):
        if isinstance(value, list):
            setattr(node, field, [self.visit(v) if isinstance(v, ast.AST) else v for v in value])
        elif isinstance(value, ast.AST):
            setattr(node, field, self.visit(value))

    def _here(self, node: ast.AST) -> ast.AST:
        """Mutation points of this node itself (children first, so the order is stable)."""
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                new = CMP.get(type(op))
                if new and self._point(node, f"`{SYMBOL[type(op)]}` → `{SYMBOL[new]}`"):
                    node.ops[i] = new()
        elif isinstance(node, (ast.BinOp, ast.AugAssign)):
            new = BIN.get(type(node.op))
            if new and self._point(node, f"`{SYMBOL[type(node.op)]}` → `{SYMBOL[new]}`"):
                node.op = new()
        elif isinstance(node, ast.BoolOp):
            new = ast.Or if isinstance(node.op, ast.And) else ast.And
            if self._point(node, f"`{SYMBOL[type(node.op)]}` → `{SYMBOL[new]}`"):
                node.op = new()
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            if self._point(node, "`not` removed" if isinstance(node.op, ast.Not) else "unary `-` removed"):
                return node.operand
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, str):
                if self.strings and value and self._point(node, f"{value!r} → {'XX' + value + 'XX'!r}"):
                    return ast.copy_location(ast.Constant("XX" + value + "XX"), node)
            else:
                new = _mutate_constant(value)
                if new is not None and self._point(node, f"`{value!r}` → `{new!r}`"):
                    return ast.copy_location(ast.Constant(new), node)
        return node


def mutants(module: str, source: str, *, strings: bool = False) -> list[Mutant]:
    walker = _Walker(strings)
    walker.visit(ast.parse(source))
    lines = source.splitlines()
    seen: dict[tuple, int] = {}
    out = []
    for i, (line, end, scope, edit) in enumerate(walker.points):
        text = lines[line - 1].strip()
        base = (scope, edit, text)
        n = seen.get(base, 0)
        seen[base] = n + 1
        digest = hashlib.sha1(text.encode()).hexdigest()[:8]
        out.append(Mutant(module, i, line, end, scope, edit, f"{module}:{scope}:{edit}:{digest}:{n}"))
    return out


def mutated_source(source: str, index: int, *, strings: bool = False) -> str:
    walker = _Walker(strings, target=index)
    tree = walker.visit(ast.parse(source))
    if not walker.applied:
        raise IndexError(f"no mutant {index}")
    return ast.unparse(ast.fix_missing_locations(tree))

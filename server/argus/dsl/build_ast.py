"""Lark parse callbacks that build the Argus syntax tree directly (no intermediate parse tree)."""

from __future__ import annotations

from lark import Token, Transformer

from argus.dsl import ast
from argus.dsl.operators import BINARY_PRECEDENCE, PREFIX_BINDING
from argus.dsl.spans import Span
from argus.dsl.unparse import unparse

# Keywords and brackets stay in the token stream so that spans are exact; callbacks then drop them.
SYNTAX = frozenset(
    {
        "KERNEL",
        "MODEL",
        "SIZES",
        "TILE",
        "POLICY",
        "LAYOUT",
        "REQUIRES",
        "GRID",
        "INVARIANT",
        "FOR",
        "IF",
        "ELIF",
        "ELSE",
        "NOT",
    }
    | {"LPAR", "RPAR", "LSQB", "RSQB"}
)


def token_span(token: Token) -> Span:
    return Span(token.line - 1, token.column - 1, token.end_line - 1, token.end_column - 1)


class SpannedList(list):
    """A list of children that also remembers the span of its brackets."""

    def __init__(self, items, span: Span):
        super().__init__(items)
        self.span = span


def _first_span(node) -> Span | None:
    if isinstance(node, SpannedList):
        return node.span
    if isinstance(node, Token):
        return token_span(node) if node.line is not None else None
    if isinstance(node, list | tuple):
        for child in node:
            found = _first_span(child)
            if found:
                return found
        return None
    return getattr(node, "span", None)


def _last_span(node) -> Span | None:
    if isinstance(node, SpannedList):
        return node.span
    if isinstance(node, list | tuple):
        for child in reversed(node):
            found = _last_span(child)
            if found:
                return found
        return None
    return _first_span(node)


def span_of(children: list) -> Span:
    """From the start of the first child that has a position to the end of the last one."""
    first, last = _first_span(children), _last_span(children)
    if first is None or last is None:
        return Span(0, 0, 0, 0)
    return Span(first.line, first.col, last.end_line, last.end_col)


def present(children: list) -> list:
    """Children that carry meaning: no keyword tokens, no absent optionals."""
    return [c for c in children if c is not None and not (isinstance(c, Token) and c.type in SYNTAX)]


def as_list(node) -> list:
    return node.elts if isinstance(node, ast.List) else []


PREFIX_TYPES = frozenset({"NOT", "UNARY_OP"})


COMPARISON = 4
BITWISE_OPS = ("&", "|", "^")


def group_operators(items: list, problems: list[tuple[str, Span, str]]) -> ast.Expr:
    """Precedence climbing over a flat list of prefix tokens, operands and binary-operator tokens.

    A comparison whose operand is an unparenthesized `&`, `|` or `^` gets a warning: in Python's (and
    Triton's) precedence `i < M & j < N` means `i < (M & j) < N`, almost never what a mask meant.
    """
    position = 0
    built: set[int] = set()  # nodes made here, as opposed to parenthesized operands
    chain_end: dict[int, ast.Compare] = {}  # a chained comparison's last link, by the node holding the chain

    def operand(minimum: int) -> ast.Expr:
        nonlocal position
        item = items[position]
        if isinstance(item, Token) and item.type in PREFIX_TYPES:
            position += 1
            op = str(item)
            if op == "not" and PREFIX_BINDING[op] < minimum:  # `a + not b`: Python rejects it, so do we
                problems.append(("AR001", token_span(item), f"`{op}` needs parentheses here: ({op} ...)"))
            inner = expression(PREFIX_BINDING[op])
            return ast.UnaryOp(op, inner, token_span(item).cover(inner.span))
        position += 1
        return item

    def expression(minimum: int) -> ast.Expr:
        nonlocal position
        left = operand(minimum)
        while position < len(items):
            op = str(items[position])
            precedence = BINARY_PRECEDENCE[op]
            if precedence < minimum:
                break
            position += 1
            right = expression(precedence if op == "**" else precedence + 1)
            span = left.span.cover(right.span)
            if op in ("and", "or"):
                left = ast.BoolOp(op, left, right, span)
            elif precedence == COMPARISON:
                for side in (left, right):
                    mixed = isinstance(side, ast.BinOp) and side.op in BITWISE_OPS
                    if mixed and id(side) in built and id(side) not in chain_end:
                        shown = [f"({unparse(x)})" if x is side else unparse(x, COMPARISON + 1) for x in (left, right)]
                        reading = f"{shown[0]} {op} {shown[1]}"
                        message = (
                            f"`{side.op}` binds tighter than `{op}`: this reads `{reading}`; "
                            f"parenthesize the comparisons, as in `(i < M) {side.op} (j < N)`"
                        )
                        problems.append(("AR008", span, message))
                if id(left) in chain_end or (isinstance(left, ast.Compare) and id(left) in built):
                    # `a < b < c` means `(a < b) & (b < c)`, as in Python (for tiles, `and` becomes `&`).
                    last = chain_end.get(id(left), left)
                    link = ast.Compare(op, last.right, right, last.right.span.cover(right.span))
                    left = ast.BinOp("&", left, link, span)
                    chain_end[id(left)] = link
                else:
                    left = ast.Compare(op, left, right, span)
            else:
                left = ast.BinOp(op, left, right, span)
            built.add(id(left))
        return left

    return expression(0)


class BuildAst(Transformer):
    def __init__(self) -> None:
        super().__init__()
        # Problems found while building (bad number literals, precedence traps): (code, span, message).
        self.problems: list[tuple[str, Span, str]] = []

    # ---- items
    def kernel_item(self, children):
        return present(children)[0]

    sizes_item = kernel_item
    model_item = kernel_item

    def py_header(self, children):
        kind, name, params, tolerance = children
        return kind, name, params, tolerance, span_of(children)

    def py_tolerance(self, children):
        items = children[1:]
        value = next((item for item in items if not isinstance(item, ast.Binding)), None)
        bindings = [item for item in items if isinstance(item, ast.Binding)]
        return ast.Tolerance(value, bindings, span_of(children))

    def py_kind(self, children):
        return str(children[0])

    def py_params(self, children):
        return children[0] or []

    def kernel(self, children):
        _keyword, name, _open, params, _close, body = children
        return ast.Kernel(str(name), token_span(name), params or [], body, span_of(children))

    def model(self, children):
        _keyword, name, _open, params, _close, body = children
        return ast.Model(str(name), token_span(name), params or [], body, span_of(children))

    def params(self, children):
        return present(children)

    def param(self, children):
        name, mode, dtype, shape, view, default = children
        dtype_name = ast.Name(str(dtype), token_span(dtype))
        inout = mode is not None and str(mode) == "inout"
        view_shape, view_span = (None, None) if view is None else view
        return ast.Param(
            str(name),
            token_span(name),
            mode is not None,
            dtype_name,
            shape,
            default,
            span_of(children),
            inout,
            view_shape,
            view_span,
        )

    def view(self, children):
        keyword, shape = children
        return shape, token_span(keyword).cover(shape.span)

    def shape(self, children):
        return SpannedList(present(children), span_of(children))

    def suite(self, children):
        return present(children)

    # ---- statements
    def tile_decl(self, children):
        return ast.TileDecl(present(children), span_of(children))

    def policy_decl(self, children):
        return ast.PolicyDecl(present(children), span_of(children))

    def setting(self, children):
        name, value, _tune, tune_list = children
        return ast.Setting(str(name), token_span(name), value, tune_list, span_of(children))

    def layout_decl(self, children):
        _keyword, tensor, axis = children
        return ast.LayoutDecl(
            ast.Name(str(tensor), token_span(tensor)), ast.Name(str(axis), token_span(axis)), span_of(children)
        )

    def requires_decl(self, children):
        return ast.Requires(present(children), span_of(children))

    def grid_decl(self, children):
        (value,) = present(children)
        dims = value.elts if isinstance(value, ast.Tuple) else [value]
        return ast.Grid(dims, span_of(children))

    def invariant_decl(self, children):
        return ast.Invariant(present(children)[0], span_of(children))

    def assign(self, children):
        targets, value = children
        return ast.Assign(targets, value, span_of(children))

    def name_list(self, children):
        return [ast.Name(str(t), token_span(t)) for t in present(children)]

    def aug_assign(self, children):
        name, op, value = children
        return ast.AugAssign(ast.Name(str(name), token_span(name)), str(op)[:-1], value, span_of(children))

    def expr_stmt(self, children):
        return ast.ExprStmt(children[0], span_of(children))

    def pass_stmt(self, children):
        return ast.Pass(span_of(children))

    def error_stmt(self, children):
        return ast.ErrorStmt(span_of(children))

    def error_block(self, children):
        return ast.ErrorStmt(span_of(children), present(children)[-1])

    def for_stmt(self, children):
        var, iterable, body = present(children)
        return ast.For(ast.Name(str(var), token_span(var)), iterable, body, span_of(children))

    def if_stmt(self, children):
        condition, body, *rest = present(children)
        orelse: list = []
        # elif chains nest as an `if` inside the else branch, as in Python's own tree.
        for clause in reversed(rest):
            kind, span, clause_cond, clause_body = clause
            if kind == "else":
                orelse = clause_body
            else:
                span = span.cover(orelse[-1].span) if orelse else span
                orelse = [ast.If(clause_cond, clause_body, orelse, span)]
        return ast.If(condition, body, orelse, span_of(children))

    def elif_clause(self, children):
        condition, body = present(children)
        return ("elif", span_of(children), condition, body)

    def else_clause(self, children):
        return ("else", span_of(children), None, present(children)[-1])

    # ---- problem sizes
    def sizes(self, children):
        name, *sets = present(children)
        sets = [s for s in sets if isinstance(s, ast.SizeSet)]
        return ast.Sizes(str(name), token_span(name), sets, span_of(children))

    def size_set(self, children):
        items = present(children)
        if isinstance(items[0], ast.ErrorStmt):
            return items[0]
        name, *bindings = items
        return ast.SizeSet(str(name), token_span(name), bindings, span_of(children))

    def binding(self, children):
        name, value = children
        return ast.Binding(str(name), token_span(name), value, span_of(children))

    # ---- expressions
    def name(self, children):
        return ast.Name(str(children[0]), token_span(children[0]))

    def int_(self, children):
        text = str(children[0])
        try:
            value = int(text.replace("_", ""), 0)
        except ValueError:
            self.problems.append(("AR001", token_span(children[0]), f"invalid number {text!r}"))
            value = 0
        return ast.Int(value, token_span(children[0]))

    def float_(self, children):
        return ast.Float(float(str(children[0]).replace("_", "")), token_span(children[0]))

    def string(self, children):
        return ast.Str(str(children[0])[1:-1], token_span(children[0]))

    def true(self, children):
        return ast.Bool(True, token_span(children[0]))

    def false(self, children):
        return ast.Bool(False, token_span(children[0]))

    def none(self, children):
        return ast.NoneLit(token_span(children[0]))

    def paren(self, children):
        # The parentheses belong to the span: an error on `(i + 1) * j` underlines all of it.
        inner = children[1]
        inner.span = token_span(children[0]).cover(token_span(children[2]))
        return inner

    def tuple(self, children):
        return ast.Tuple(present(children), span_of(children))

    def list(self, children):
        return ast.List(present(children), span_of(children))

    def chain(self, children):
        return group_operators(children, self.problems)

    def call(self, children):
        func, _open, arguments, _close = children
        args = [a for a in arguments or [] if not isinstance(a, ast.Keyword)]
        keywords = [a for a in arguments or [] if isinstance(a, ast.Keyword)]
        return ast.Call(func, args, keywords, span_of(children))

    def arguments(self, children):
        return present(children)

    def keyword(self, children):
        name, value = children
        return ast.Keyword(str(name), token_span(name), value, span_of(children))

    def subscript(self, children):
        value, _open, indices, _close = children
        return ast.Subscript(value, indices, span_of(children))

    def subscripts(self, children):
        return present(children)

    def full_slice(self, children):
        return ast.FullSlice(token_span(children[0]))

    def attribute(self, children):
        value, attr = children
        return ast.Attribute(value, str(attr), token_span(attr), span_of(children))

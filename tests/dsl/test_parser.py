"""The Argus parser: every construct of the grammar, exact spans, and error recovery.

One behaviour per test, with its input inline. Spans are 0-based (line, col, end_line, end_col), end exclusive,
as in LSP.
"""

from __future__ import annotations

import warnings

import pytest

from argus.dsl import ast
from argus.dsl.parser import ParseResult, parse
from argus.dsl.spans import Span

# ---- helpers ---------------------------------------------------------------------------------------------


def parse_clean(text: str) -> ast.Module:
    """Parse text that must have no syntax diagnostic."""
    result = parse(text)
    assert [d.message for d in result.diagnostics] == []
    return result.module


def only_kernel(text: str) -> ast.Kernel:
    module = parse_clean(text)
    assert len(module.items) == 1
    kernel = module.items[0]
    assert isinstance(kernel, ast.Kernel)
    return kernel


def body_of(*lines: str) -> list[ast.Stmt]:
    """The statements of a kernel whose body is the given lines, each indented by four spaces."""
    text = "kernel k(A: f16[M]):\n" + "".join(f"    {line}\n" for line in lines)
    return only_kernel(text).body


def expr_of(source: str) -> ast.Expr:
    """The value of `x = <source>` on line 1, column 8."""
    (stmt,) = body_of(f"x = {source}")
    assert isinstance(stmt, ast.Assign)
    return stmt.value


def sx(node) -> str:
    """An expression as an S-expression, to check the tree's shape (and so precedence) at a glance."""
    match node:
        case ast.Name(id=name):
            return name
        case ast.Int(value=value) | ast.Float(value=value) | ast.Bool(value=value):
            return repr(value)
        case ast.NoneLit():
            return "None"
        case ast.Str(value=value):
            return repr(value)
        case ast.BinOp(op=op, left=left, right=right) | ast.Compare(op=op, left=left, right=right):
            return f"({op} {sx(left)} {sx(right)})"
        case ast.BoolOp(op=op, left=left, right=right):
            return f"({op} {sx(left)} {sx(right)})"
        case ast.UnaryOp(op=op, operand=operand):
            return f"({op} {sx(operand)})"
        case ast.Call(func=func, args=args, keywords=keywords):
            parts = [sx(func), *(sx(a) for a in args), *(f"{k.name}={sx(k.value)}" for k in keywords)]
            return f"(call {' '.join(parts)})"
        case ast.Attribute(value=value, attr=attr):
            return f"(. {sx(value)} {attr})"
        case ast.Subscript(value=value, indices=indices):
            return f"([] {' '.join([sx(value), *(sx(i) for i in indices)])})"
        case ast.FullSlice():
            return ":"
        case ast.Tuple(elts=elts):
            return f"(tuple {' '.join(sx(e) for e in elts)})".replace(" )", ")")
        case ast.List(elts=elts):
            return f"[{' '.join(sx(e) for e in elts)}]"
    raise AssertionError(f"not an expression: {node!r}")


def span(node) -> tuple[int, int, int, int]:
    s = node.span if not isinstance(node, Span) else node
    return (s.line, s.col, s.end_line, s.end_col)


def found(result: ParseResult) -> list[tuple[str, int, int]]:
    """(code, line, character) of every diagnostic, in position order."""
    return sorted((d.code, d.range.start.line, d.range.start.character) for d in result.diagnostics)


def where(diagnostic) -> tuple[int, int, int, int]:
    r = diagnostic.range
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def single(result: ParseResult):
    assert len(result.diagnostics) == 1, [d.message for d in result.diagnostics]
    return result.diagnostics[0]


# ---- kernel header and parameters ------------------------------------------------------------------------


def test_kernel_has_its_name_and_parameters_in_order():
    kernel = only_kernel("kernel add(x: f32[N], y: f32[N], z: out f32[N]):\n    pass\n")
    assert kernel.name == "add"
    assert [p.name for p in kernel.params] == ["x", "y", "z"]


def test_tensor_parameter_has_dtype_and_shape():
    (param,) = only_kernel("kernel k(A: f16[M, K]):\n    pass\n").params
    assert param.dtype.id == "f16"
    assert [sx(d) for d in param.shape] == ["M", "K"]
    assert param.is_out is False
    assert param.default is None


def test_out_parameter_is_marked_out():
    (param,) = only_kernel("kernel k(C: out f16[M, N]):\n    pass\n").params
    assert param.is_out is True
    assert param.dtype.id == "f16"
    assert [sx(d) for d in param.shape] == ["M", "N"]


def test_scalar_parameter_has_no_shape():
    (param,) = only_kernel("kernel k(n: i32):\n    pass\n").params
    assert param.dtype.id == "i32"
    assert param.shape is None
    assert param.default is None


def test_scalar_parameter_takes_a_default():
    (param,) = only_kernel("kernel k(eps: f32 = 1e-5):\n    pass\n").params
    assert param.shape is None
    assert isinstance(param.default, ast.Float)
    assert param.default.value == 1e-5


def test_scalar_default_may_be_negative():
    (param,) = only_kernel("kernel k(x: i32 = -1):\n    pass\n").params
    assert sx(param.default) == "(- 1)"


def test_shape_dims_are_names_ints_or_expressions():
    (param,) = only_kernel("kernel k(A: f16[M, 64, E + 1]):\n    pass\n").params
    assert [sx(d) for d in param.shape] == ["M", "64", "(+ E 1)"]


def test_shape_takes_a_trailing_comma():
    (param,) = only_kernel("kernel k(A: f16[M,]):\n    pass\n").params
    assert [sx(d) for d in param.shape] == ["M"]


def test_parameters_may_span_lines_and_end_with_a_comma():
    text = "kernel k(\n    A: f16[M],   # the input\n\n    B: out f16[M],\n):\n    pass\n"
    kernel = only_kernel(text)
    assert [(p.name, p.is_out) for p in kernel.params] == [("A", False), ("B", True)]


def test_kernel_may_have_no_parameters():
    assert only_kernel("kernel k():\n    pass\n").params == []


def test_out_and_tune_are_usable_as_names():
    kernel = only_kernel("kernel k(out: f16[M]):\n    tune = out + 1\n")
    assert kernel.params[0].name == "out"
    (stmt,) = kernel.body
    assert [t.id for t in stmt.targets] == ["tune"]
    assert sx(stmt.value) == "(+ out 1)"


# ---- declarations ----------------------------------------------------------------------------------------


def test_tile_declares_several_settings():
    (tile,) = body_of("tile BM = 128, BN = 64, BK = 32")
    assert isinstance(tile, ast.TileDecl)
    assert [(s.name, sx(s.value), s.tune) for s in tile.settings] == [
        ("BM", "128", None),
        ("BN", "64", None),
        ("BK", "32", None),
    ]


def test_tile_setting_takes_a_tune_list():
    (tile,) = body_of("tile BM = 128 tune [64, 128, 256], BK = 32")
    bm, bk = tile.settings
    assert isinstance(bm.tune, ast.List)
    assert sx(bm.tune) == "[64 128 256]"
    assert bk.tune is None


def test_policy_declares_settings_with_optional_tune_list():
    (policy,) = body_of("policy num_warps = 4 tune [4, 8], num_stages = 3")
    assert isinstance(policy, ast.PolicyDecl)
    assert [(s.name, sx(s.value)) for s in policy.settings] == [("num_warps", "4"), ("num_stages", "3")]
    assert sx(policy.settings[0].tune) == "[4 8]"


def test_requires_takes_several_conditions():
    (requires,) = body_of("requires K % BK == 0, M >= 16")
    assert isinstance(requires, ast.Requires)
    assert [sx(c) for c in requires.conditions] == ["(== (% K BK) 0)", "(>= M 16)"]


def test_grid_tuple_gives_one_dim_per_element():
    (grid,) = body_of("grid (cdiv(M, BM), Z * H)")
    assert isinstance(grid, ast.Grid)
    assert [sx(d) for d in grid.dims] == ["(call cdiv M BM)", "(* Z H)"]


def test_grid_single_element_tuple_gives_one_dim():
    (grid,) = body_of("grid (M,)")
    assert [sx(d) for d in grid.dims] == ["M"]


def test_grid_bare_expression_gives_one_dim():
    (grid,) = body_of("grid cdiv(N, BLOCK)")
    assert [sx(d) for d in grid.dims] == ["(call cdiv N BLOCK)"]


def test_invariant_holds_a_condition():
    (invariant,) = body_of("invariant k % BK == 0")
    assert isinstance(invariant, ast.Invariant)
    assert sx(invariant.condition) == "(== (% k BK) 0)"


def test_pass_is_a_statement():
    (stmt,) = body_of("pass")
    assert isinstance(stmt, ast.Pass)


# ---- assignments and expression statements ---------------------------------------------------------------


def test_assignment_to_one_name():
    (stmt,) = body_of("acc = zeros((BM, BN), f32)")
    assert isinstance(stmt, ast.Assign)
    assert [t.id for t in stmt.targets] == ["acc"]
    assert sx(stmt.value) == "(call zeros (tuple BM BN) f32)"


def test_tuple_assignment_has_several_targets_and_a_tuple_value():
    (stmt,) = body_of("pm, pn = program_id(0), program_id(1)")
    assert [t.id for t in stmt.targets] == ["pm", "pn"]
    assert sx(stmt.value) == "(tuple (call program_id 0) (call program_id 1))"


def test_trailing_commas_make_one_element_tuples():
    (stmt,) = body_of("c, = 1,")
    assert [t.id for t in stmt.targets] == ["c"]
    assert sx(stmt.value) == "(tuple 1)"


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "&", "|"])
def test_augmented_assignment_records_its_operator(op):
    (stmt,) = body_of(f"acc {op}= 2")
    assert isinstance(stmt, ast.AugAssign)
    assert (stmt.target.id, stmt.op, sx(stmt.value)) == ("acc", op, "2")


def test_call_statement_is_an_expression_statement():
    (stmt,) = body_of("store(C[rm, rn], c)")
    assert isinstance(stmt, ast.ExprStmt)
    assert sx(stmt.expr) == "(call store ([] C rm rn) c)"


def test_call_takes_positional_then_keyword_arguments():
    call = expr_of("load(A[rm, rk], mask=rm < M, other=0)")
    assert isinstance(call, ast.Call)
    assert [sx(a) for a in call.args] == ["([] A rm rk)"]
    assert [(k.name, sx(k.value)) for k in call.keywords] == [("mask", "(< rm M)"), ("other", "0")]


def test_call_takes_a_trailing_comma_and_no_arguments():
    assert sx(expr_of("f(a,)")) == "(call f a)"
    assert sx(expr_of("f()")) == "(call f)"


def test_method_call_is_a_call_of_an_attribute():
    call = expr_of("acc.to(f16)")
    assert isinstance(call, ast.Call)
    assert isinstance(call.func, ast.Attribute)
    assert (sx(call.func.value), call.func.attr) == ("acc", "to")
    assert [sx(a) for a in call.args] == ["f16"]


def test_postfix_operations_chain_left_to_right():
    assert sx(expr_of("load(b[rn]).to(f32)[None, :]")) == "([] (call (. (call load ([] b rn)) to) f32) None :)"


def test_subscript_takes_full_slices_and_none():
    sub = expr_of("rk[:, None]")
    assert isinstance(sub, ast.Subscript)
    assert isinstance(sub.indices[0], ast.FullSlice)
    assert isinstance(sub.indices[1], ast.NoneLit)


def test_subscript_takes_a_trailing_comma():
    assert sx(expr_of("A[i, :,]")) == "([] A i :)"


# ---- literals --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "value"),
    [("128", 128), ("0x1F", 31), ("1_000", 1000), ("0", 0)],
)
def test_integer_literals(source, value):
    node = expr_of(source)
    assert isinstance(node, ast.Int)
    assert node.value == value


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("1.5", 1.5),
        (".5", 0.5),
        ("1.", 1.0),
        ("2e3", 2000.0),
        ("1e-5", 1e-5),
        ("0.08838834764831845", 0.08838834764831845),
    ],
)
def test_float_literals(source, value):
    node = expr_of(source)
    assert isinstance(node, ast.Float)
    assert node.value == value


def test_string_literals_in_either_quote():
    assert expr_of('"tf32"') == ast.Str("tf32", Span(1, 8, 1, 14))
    assert expr_of("'ieee'") == ast.Str("ieee", Span(1, 8, 1, 14))


def test_true_false_and_none_literals():
    assert sx(expr_of("(True, False, None)")) == "(tuple True False None)"
    assert isinstance(expr_of("True"), ast.Bool)
    assert isinstance(expr_of("None"), ast.NoneLit)


def test_list_literal():
    assert sx(expr_of("[1, 2, 3]")) == "[1 2 3]"
    assert sx(expr_of("[]")) == "[]"


def test_parenthesised_tuples():
    assert sx(expr_of("(BM, BN)")) == "(tuple BM BN)"
    assert sx(expr_of("(BM,)")) == "(tuple BM)"


def test_parentheses_only_group():
    assert sx(expr_of("(a)")) == "a"
    assert sx(expr_of("(a + b) * c")) == "(* (+ a b) c)"


def test_parenthesised_expression_span_includes_its_parentheses():
    assert span(expr_of("(a)")) == (1, 8, 1, 11)
    assert span(expr_of("((a + b))")) == (1, 8, 1, 17)
    assert span(expr_of("(a + b) * c").left) == (1, 8, 1, 15)


# ---- operators and precedence ----------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_comparison_operators(op):
    node = expr_of(f"a {op} b")
    assert isinstance(node, ast.Compare)
    assert sx(node) == f"({op} a b)"


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "&", "|", "^"])
def test_binary_operators(op):
    node = expr_of(f"a {op} b")
    assert isinstance(node, ast.BinOp)
    assert sx(node) == f"({op} a b)"


def test_comparison_binds_looser_than_bitwise_and():
    result = parse("kernel k():\n    m = a < b & c\n")
    assert sx(result.module.items[0].body[0].value) == "(< a (& b c))"


def test_comparison_mixed_with_a_bitwise_operator_is_warned_as_ar008():
    result = parse("kernel k():\n    m = i < M & j < N\n")
    diagnostic = single(result)
    assert (diagnostic.code, diagnostic.severity.value) == ("AR008", "warning")
    assert where(diagnostic) == (1, 8, 1, 17)
    assert "i < (M & j)" in diagnostic.message
    assert sx(result.module.items[0].body[0].value) == "(& (< i (& M j)) (< (& M j) N))"


def test_chained_comparison_means_both_comparisons_as_in_python():
    value = expr_of("0 <= i < N")
    assert sx(value) == "(& (<= 0 i) (< i N))"
    assert span(value) == (1, 8, 1, 18)
    assert span(value.right) == (1, 13, 1, 18)


def test_longer_comparison_chain_links_each_neighbouring_pair():
    result = parse("kernel k():\n    x = a < b <= c < d\n")
    assert sx(result.module.items[0].body[0].value) == "(& (& (< a b) (<= b c)) (< c d))"


def test_chain_of_three_comparisons_is_not_warned():
    assert parse("kernel k():\n    x = a < b <= c < d\n").diagnostics == []


def test_bitwise_operand_of_a_comparison_on_the_left_is_warned_too():
    diagnostic = single(parse("kernel k():\n    m = a | b == c\n"))
    assert (diagnostic.code, where(diagnostic)) == ("AR008", (1, 8, 1, 18))


def test_parenthesised_comparisons_combined_bitwise_are_not_warned():
    assert sx(expr_of("(rk[:, None] < K) & (rn[None, :] < N)")) == "(& (< ([] rk : None) K) (< ([] rn None :) N))"
    assert sx(expr_of("(a & b) < c")) == "(< (& a b) c)"


def test_multiplication_binds_tighter_than_addition():
    assert sx(expr_of("pm * BM + arange(BM)")) == "(+ (* pm BM) (call arange BM))"


def test_arithmetic_is_left_associative():
    assert sx(expr_of("a - b - c")) == "(- (- a b) c)"
    assert sx(expr_of("a // b % c")) == "(% (// a b) c)"


def test_bitwise_operators_follow_python_precedence():
    assert sx(expr_of("a | b ^ c & d")) == "(| a (^ b (& c d)))"


def test_arithmetic_binds_tighter_than_comparison():
    assert sx(expr_of("a + b < c * d")) == "(< (+ a b) (* c d))"


def test_unary_minus_binds_tighter_than_multiplication():
    assert sx(expr_of("-a * b")) == "(* (- a) b)"
    assert sx(expr_of("a * -b")) == "(* a (- b))"
    assert sx(expr_of("a - -b")) == "(- a (- b))"


def test_unary_plus_and_invert():
    assert sx(expr_of("+a")) == "(+ a)"
    assert sx(expr_of("~a")) == "(~ a)"
    assert sx(expr_of("--a")) == "(- (- a))"


def test_unary_minus_applies_to_a_call():
    assert sx(expr_of("-exp(x)")) == "(- (call exp x))"


def test_not_binds_looser_than_comparison():
    assert sx(expr_of("not a == b")) == "(not (== a b))"


def test_and_binds_tighter_than_or():
    assert sx(expr_of("a or b and not c")) == "(or a (and b (not c)))"
    assert sx(expr_of("a and b or c")) == "(or (and a b) c)"


def test_boolean_operators_are_bool_ops():
    node = expr_of("a and b")
    assert isinstance(node, ast.BoolOp)
    assert isinstance(expr_of("not a"), ast.UnaryOp)


def test_power_operator():
    assert sx(expr_of("a ** 2")) == "(** a 2)"


def test_power_is_right_associative():
    assert sx(expr_of("a ** b ** c")) == "(** a (** b c))"


def test_unary_minus_binds_looser_than_power():
    assert sx(expr_of("-a ** b")) == "(- (** a b))"


@pytest.mark.parametrize("op", ["<<", ">>"])
def test_shift_operators(op):
    assert sx(expr_of(f"a {op} 2")) == f"({op} a 2)"


def test_shift_binds_looser_than_addition():
    assert sx(expr_of("a << b + c")) == "(<< a (+ b c))"


def test_shift_binds_tighter_than_bitwise_and():
    assert sx(expr_of("a & b >> 1")) == "(& a (>> b 1))"


def test_power_binds_tighter_than_a_unary_minus_on_its_right():
    assert sx(expr_of("a ** -b * c")) == "(* (** a (- b)) c)"


def test_power_binds_tighter_than_multiplication():
    assert sx(expr_of("2 * x[i] ** 2")) == "(* 2 (** ([] x i) 2))"


# ---- control flow ----------------------------------------------------------------------------------------


def test_for_loop_has_a_variable_an_iterable_and_a_body():
    (loop,) = body_of("for k in range(0, K, BK):", "    rk = k + arange(BK)", "    acc += 1")
    assert isinstance(loop, ast.For)
    assert loop.var.id == "k"
    assert sx(loop.iter) == "(call range 0 K BK)"
    assert [type(s) for s in loop.body] == [ast.Assign, ast.AugAssign]


def test_for_loops_nest():
    (outer,) = body_of("for m0 in range(0, M, BM):", "    for k0 in range(0, K, BK):", "        pass", "    x = 1")
    inner, after = outer.body
    assert isinstance(inner, ast.For)
    assert inner.var.id == "k0"
    assert isinstance(inner.body[0], ast.Pass)
    assert isinstance(after, ast.Assign)


def test_if_without_else_has_an_empty_orelse():
    (stmt,) = body_of("if pm == 0:", "    acc += 1")
    assert isinstance(stmt, ast.If)
    assert sx(stmt.condition) == "(== pm 0)"
    assert [type(s) for s in stmt.body] == [ast.AugAssign]
    assert stmt.orelse == []


def test_if_else():
    (stmt,) = body_of("if a:", "    x = 1", "else:", "    x = 2")
    assert sx(stmt.body[0].value) == "1"
    assert sx(stmt.orelse[0].value) == "2"


def test_elif_chain_nests_as_an_if_in_the_else_branch():
    (stmt,) = body_of("if a:", "    x = 1", "elif b:", "    x = 2", "elif c:", "    x = 3", "else:", "    pass")
    (second,) = stmt.orelse
    assert isinstance(second, ast.If)
    assert sx(second.condition) == "b"
    (third,) = second.orelse
    assert sx(third.condition) == "c"
    assert [type(s) for s in third.orelse] == [ast.Pass]


def test_statements_after_a_block_belong_to_the_outer_body():
    body = body_of("if a:", "    x = 1", "y = 2")
    assert [type(s) for s in body] == [ast.If, ast.Assign]
    assert len(body[0].body) == 1


def test_walk_stmts_visits_nested_statements_in_source_order():
    body = body_of("x = 1", "for i in range(3):", "    if i:", "        y = 2", "    else:", "        z = 3", "w = 4")
    names = [s.targets[0].id for s in ast.walk_stmts(body) if isinstance(s, ast.Assign)]
    assert names == ["x", "y", "z", "w"]


# ---- reference, inputs and sizes -------------------------------------------------------------------------


def test_reference_has_kernel_name_params_and_python_body():
    text = "reference matmul(A, B):\n    return A @ B\n"
    (block,) = parse_clean(text).items
    assert isinstance(block, ast.PythonBlock)
    assert (block.kind, block.kernel) == ("reference", "matmul")
    assert [p.id for p in block.params] == ["A", "B"]
    assert block.body.strip() == "return A @ B"
    assert (block.body_line, block.body_indent) == (1, 4)


def test_reference_body_is_any_python_and_is_dedented():
    text = (
        "reference moe(X, W):\n"
        "    Y = torch.zeros(M, N)  # comment\n"
        "\n"
        "    for e in range(E):\n"
        "        Y[lo:hi] = (X[lo:hi].float() @ W[e].float()).half()\n"
        "    return Y\n"
    )
    (block,) = parse_clean(text).items
    assert block.body.splitlines()[:4] == [
        "Y = torch.zeros(M, N)  # comment",
        "",
        "for e in range(E):",
        "    Y[lo:hi] = (X[lo:hi].float() @ W[e].float()).half()",
    ]


def test_reference_without_params_in_parentheses():
    (block,) = parse_clean("reference k():\n    return 1\n").items
    assert block.params == []


def test_inputs_block_without_params():
    (block,) = parse_clean("inputs moe:\n    offsets = torch.arange(E + 1)\n").items
    assert (block.kind, block.kernel, block.params) == ("inputs", "moe", None)


def test_inputs_block_with_params():
    (block,) = parse_clean("inputs moe(offsets):\n    return torch.arange(E + 1)\n").items
    assert block.kind == "inputs"
    assert [p.id for p in block.params] == ["offsets"]


def test_sizes_block_with_several_sets():
    text = "sizes matmul:\n    small: M = 64, N = 64, K = 64\n    large: M = 4096, N = 2 * 2048, K = 268_435_456\n"
    (sizes,) = parse_clean(text).items
    assert isinstance(sizes, ast.Sizes)
    assert sizes.kernel == "matmul"
    assert [s.name for s in sizes.sets] == ["small", "large"]
    assert [(b.name, sx(b.value)) for b in sizes.sets[1].bindings] == [
        ("M", "4096"),
        ("N", "(* 2 2048)"),
        ("K", "268435456"),
    ]


def test_size_set_takes_a_trailing_comma():
    (sizes,) = parse_clean("sizes k:\n    s: M = 1, N = 2,\n").items
    assert [b.name for b in sizes.sets[0].bindings] == ["M", "N"]


def test_items_come_in_source_order():
    text = (
        "kernel k(A: f16[M]):\n    pass\n"
        "reference k(A):\n    return A\n"
        "inputs k:\n    A = 1\n"
        "sizes k:\n    s: M = 1\n"
        "kernel j():\n    pass\n"
    )
    module = parse_clean(text)
    kinds = [getattr(item, "kind", type(item).__name__) for item in module.items]
    assert kinds == ["Kernel", "reference", "inputs", "Sizes", "Kernel"]
    assert [k.name for k in module.kernels] == ["k", "j"]


@pytest.mark.parametrize(
    "text", ["", "\n", "# only a comment\n", "   \n\t\n"], ids=["empty", "newline", "comment", "blank"]
)
def test_file_without_items_has_no_items_and_no_diagnostics(text):
    result = parse(text)
    assert result.module.items == []
    assert result.diagnostics == []


# ---- comments, blank lines and line structure ------------------------------------------------------------

COMMENTED = """\
# a file comment

# another one
kernel k(A: f16[M],  # after a parameter
         B: out f16[M]):  # after the header

    # indented comment
# comment in column 0 inside the body
        # comment deeper than the body
    tile BM = 64  # trailing

    for i in range(3):  # trailing after a colon

        # before a nested statement
        x = 1
   \t
    # comment after the loop
    y = 2
# between items

reference k(A):
    # comment in Python
    return A  # trailing

sizes k:  # after the header
    # before a set
    s: M = 1  # trailing

    t: M = 2
# at the end of the file"""


def test_comments_and_blank_lines_are_allowed_everywhere():
    module = parse_clean(COMMENTED)
    kernel, reference, sizes = module.items
    assert [p.name for p in kernel.params] == ["A", "B"]
    assert [type(s) for s in kernel.body] == [ast.TileDecl, ast.For, ast.Assign]
    assert [type(s) for s in kernel.body[1].body] == [ast.Assign]
    assert reference.kind == "reference"
    assert [s.name for s in sizes.sets] == ["s", "t"]


def test_kernel_span_ends_at_its_last_statement_not_at_trailing_comments():
    kernel = only_kernel("kernel k():\n    x = 1\n\n    # trailing\n\n")
    assert span(kernel) == (0, 0, 1, 9)


def test_windows_line_endings_parse_like_unix_ones():
    unix = "kernel k(A: f16[M]):\n    x = 1\n    if x:\n        y = 2\n"
    windows = unix.replace("\n", "\r\n")
    assert parse_clean(windows) == parse_clean(unix)


def test_tab_indented_body():
    kernel = only_kernel("kernel k():\n\tx = 1\n\tfor i in range(2):\n\t\ty = 2\n")
    assert [type(s) for s in kernel.body] == [ast.Assign, ast.For]


def test_brackets_continue_a_statement_over_lines():
    (stmt,) = body_of("a = load(A[rm, rk],", "         mask=rm < M,", "         other=0)")
    assert sx(stmt.value) == "(call load ([] A rm rk) mask=(< rm M) other=0)"
    assert span(stmt) == (1, 4, 3, 21)


def test_backslash_continues_a_line():
    body = body_of("x = a + \\", "    b", "y = 1")
    assert sx(body[0].value) == "(+ a b)"
    assert len(body) == 2


def test_file_without_final_newline():
    kernel = only_kernel("kernel k():\n    x = 1")
    assert span(kernel.body[0]) == (1, 4, 1, 9)


# ---- exact spans -----------------------------------------------------------------------------------------

SPANS = """\
kernel matmul(A: f16[M, K], C: out f16[M, N], alpha: f32 = 1.0):
    tile BM = 128 tune [64, 128], BK = 64
    acc = dot(a, b, acc, input_precision="tf32")
    for k in range(0, K, BK):
        rk = k + arange(BK)
    store(C[rm, rn], acc.to(f16))
"""
#   0         1         2         3         4         5         6
#   0123456789012345678901234567890123456789012345678901234567890123456789


@pytest.fixture(scope="module")
def matmul() -> ast.Kernel:
    return only_kernel(SPANS)


def test_span_of_a_kernel_runs_from_its_keyword_to_its_last_statement(matmul):
    assert span(matmul) == (0, 0, 5, 33)
    assert span(matmul.name_span) == (0, 7, 0, 13)


def test_span_of_parameter_parts(matmul):
    a, _c, alpha = matmul.params
    assert span(a.name_span) == (0, 14, 0, 15)
    assert span(a.dtype) == (0, 17, 0, 20)
    assert [span(d) for d in a.shape] == [(0, 21, 0, 22), (0, 24, 0, 25)]
    assert span(alpha) == (0, 46, 0, 62)
    assert span(alpha.default) == (0, 59, 0, 62)


def test_span_of_a_tensor_parameter_covers_its_shape(matmul):
    a, c, _alpha = matmul.params
    assert span(a) == (0, 14, 0, 26)
    assert span(c) == (0, 28, 0, 44)


def test_span_of_settings_and_tune_list(matmul):
    tile = matmul.body[0]
    bm, bk = tile.settings
    assert span(tile) == (1, 4, 1, 41)
    assert span(bm) == (1, 9, 1, 32)
    assert span(bm.name_span) == (1, 9, 1, 11)
    assert span(bm.tune) == (1, 23, 1, 32)
    assert span(bk) == (1, 34, 1, 41)


def test_span_of_a_name(matmul):
    assign = matmul.body[1]
    assert assign.targets[0] == ast.Name("acc", Span(2, 4, 2, 7))
    assert assign.value.args[2] == ast.Name("acc", Span(2, 20, 2, 23))


def test_span_of_a_call_and_its_keyword(matmul):
    call = matmul.body[1].value
    assert span(call) == (2, 10, 2, 48)
    assert span(call.func) == (2, 10, 2, 13)
    (keyword,) = call.keywords
    assert span(keyword) == (2, 25, 2, 47)
    assert span(keyword.name_span) == (2, 25, 2, 40)
    assert span(keyword.value) == (2, 41, 2, 47)


def test_span_of_a_statement(matmul):
    assert span(matmul.body[1]) == (2, 4, 2, 48)


def test_span_of_a_block_statement_covers_its_body(matmul):
    loop = matmul.body[2]
    assert span(loop) == (3, 4, 4, 27)
    assert span(loop.var) == (3, 8, 3, 9)
    assert span(loop.body[0]) == (4, 8, 4, 27)
    assert span(loop.body[0].value) == (4, 13, 4, 27)


def test_span_of_subscript_and_method_call(matmul):
    store = matmul.body[3].expr
    target, value = store.args
    assert span(target) == (5, 10, 5, 19)
    assert span(value) == (5, 21, 5, 32)
    assert span(value.func) == (5, 21, 5, 27)
    assert span(value.func.attr_span) == (5, 25, 5, 27)


def test_span_of_an_if_covers_elif_and_else():
    (stmt,) = body_of("if a:", "    x = 1", "elif b:", "    x = 2", "else:", "    x = 3")
    assert span(stmt) == (1, 4, 6, 13)
    assert span(stmt.orelse[0].condition) == (3, 9, 3, 10)


def test_span_of_an_elif_covers_the_else_it_holds():
    (stmt,) = body_of("if a:", "    x = 1", "elif b:", "    x = 2", "else:", "    x = 3")
    (nested,) = stmt.orelse
    assert span(nested) == (3, 4, 6, 13)


def test_span_of_operators_and_literals():
    value = expr_of("-a + b[:, None]")
    assert span(value) == (1, 8, 1, 23)
    assert span(value.left) == (1, 8, 1, 10)
    assert span(value.right) == (1, 13, 1, 23)
    assert span(value.right.indices[0]) == (1, 15, 1, 16)
    assert span(value.right.indices[1]) == (1, 18, 1, 22)
    assert span(expr_of("a ** -b")) == (1, 8, 1, 15)
    assert span(expr_of("not a")) == (1, 8, 1, 13)
    assert span(expr_of("(BM, BN)")) == (1, 8, 1, 16)


def test_span_of_python_blocks_and_sizes():
    text = "reference k(A, B):\n    return A\n\nsizes k:\n    small: M = 1, N = 2\n"
    reference, sizes = parse_clean(text).items
    assert span(reference) == (0, 0, 1, 12)
    assert span(reference.kernel_span) == (0, 10, 0, 11)
    assert [span(p) for p in reference.params] == [(0, 12, 0, 13), (0, 15, 0, 16)]
    assert span(sizes) == (3, 0, 4, 23)
    assert span(sizes.kernel_span) == (3, 6, 3, 7)
    (small,) = sizes.sets
    assert span(small) == (4, 4, 4, 23)
    assert span(small.name_span) == (4, 4, 4, 9)
    assert [span(b) for b in small.bindings] == [(4, 11, 4, 16), (4, 18, 4, 23)]


def test_span_of_the_module_covers_the_whole_text():
    assert span(parse("kernel k():\n    pass\n").module) == (0, 0, 2, 0)
    assert span(parse("kernel k():\n    pass").module) == (0, 0, 1, 8)


def test_parenthesised_value_is_inside_its_statement_span():
    (stmt,) = body_of("x = (a + b)")
    assert span(stmt) == (1, 4, 1, 15)


def test_method_call_on_a_parenthesised_expression_starts_at_the_parenthesis():
    call = expr_of("(acc * alpha).to(f16)")
    assert span(call) == (1, 8, 1, 29)
    assert span(call.func) == (1, 8, 1, 24)


def test_unary_minus_on_parentheses_covers_the_closing_parenthesis():
    assert span(expr_of("-(a)")) == (1, 8, 1, 12)


# ---- recovery: each code at its position -----------------------------------------------------------------


def test_unexpected_token_is_ar001_at_the_token():
    result = parse("kernel k():\n    x = = 1\n")
    diagnostic = single(result)
    assert diagnostic.code == "AR001"
    assert where(diagnostic) == (1, 8, 1, 9)
    assert "unexpected '='" in diagnostic.message


def test_unexpected_token_range_covers_the_whole_token():
    diagnostic = single(parse("kernel k():\n    for i range(3):\n        pass\n"))
    assert (diagnostic.code, where(diagnostic)) == ("AR001", (1, 10, 1, 15))
    assert "'in'" in diagnostic.message


def test_unexpected_character_is_ar002_at_the_character():
    diagnostic = single(parse("kernel k():\n    x = 1 ? 2\n"))
    assert (diagnostic.code, where(diagnostic)) == ("AR002", (1, 10, 1, 11))
    assert "'?'" in diagnostic.message


def test_non_ascii_character_is_ar002():
    diagnostic = single(parse("kernel k():\n    x = é\n"))
    assert (diagnostic.code, where(diagnostic)) == ("AR002", (1, 8, 1, 9))


def test_unterminated_string_is_ar002_at_the_quote():
    result = parse("kernel k():\n    x = 'abc\n    y = 1\n")
    diagnostic = single(result)
    assert (diagnostic.code, where(diagnostic)) == ("AR002", (1, 8, 1, 9))
    assert [type(s) for s in result.module.items[0].body] == [ast.ErrorStmt, ast.Assign]
    assert diagnostic.message == "unterminated string"


def test_unclosed_bracket_is_ar003_at_the_opener():
    diagnostic = single(parse("kernel k():\n    x = f(1, 2\n    y = 2\n"))
    assert (diagnostic.code, where(diagnostic)) == ("AR003", (1, 9, 1, 10))
    assert "'('" in diagnostic.message


def test_innermost_unclosed_bracket_is_reported():
    diagnostic = single(parse("kernel k():\n    x = f(A[1, 2\n    y = 2\n"))
    assert (diagnostic.code, where(diagnostic)) == ("AR003", (1, 11, 1, 12))


def test_unmatched_closer_is_ar004_at_the_closer():
    diagnostic = single(parse("kernel k():\n    x = 1)\n    y = 2\n"))
    assert (diagnostic.code, where(diagnostic)) == ("AR004", (1, 9, 1, 10))
    assert "')'" in diagnostic.message


def test_mismatched_closer_is_reported():
    result = parse("kernel k():\n    x = f(1]\n    y = 2\n")
    assert ("AR004", 1, 11) in found(result)
    assert isinstance(result.module.items[0], ast.Kernel)


def test_unexpected_indent_is_ar005_on_its_line():
    result = parse("kernel k():\n    x = 1\n      y = 2\n    z = 3\n")
    diagnostic = single(result)
    assert (diagnostic.code, where(diagnostic)) == ("AR005", (2, 0, 2, 6))
    assert [s.targets[0].id for s in result.module.items[0].body] == ["x", "y", "z"]


def test_unknown_top_level_item_is_ar006_over_its_first_line():
    result = parse("def helper():\n    return 1\nkernel k():\n    pass\n")
    diagnostic = single(result)
    assert (diagnostic.code, where(diagnostic)) == ("AR006", (0, 0, 0, 13))
    error, kernel = result.module.items
    assert isinstance(error, ast.ErrorItem)
    assert span(error) == (0, 0, 1, 12)
    assert isinstance(kernel, ast.Kernel)


def test_python_syntax_error_in_a_reference_is_ar007_at_the_error():
    result = parse("reference k(A):\n    x = A\n    return (x +* 2)\n")
    diagnostic = single(result)
    assert diagnostic.code == "AR007"
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (2, 15)
    assert isinstance(result.module.items[0], ast.PythonBlock)


def test_python_syntax_error_position_accounts_for_the_indent():
    result = parse("reference k(A):\n        return A +* 1\n")
    diagnostic = single(result)
    assert diagnostic.code == "AR007"
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (1, 18)


def test_python_syntax_error_in_an_inputs_block_is_ar007():
    diagnostic = single(parse("inputs k:\n    offsets = torch.arange(\n"))
    assert diagnostic.code == "AR007"
    assert diagnostic.range.start.line == 1


def test_reference_without_a_body_is_ar007():
    diagnostic = single(parse("reference k(A):\n\nkernel k():\n    pass\n"))
    assert diagnostic.code == "AR007"
    assert "no body" in diagnostic.message


def test_bad_reference_header_is_ar001_and_an_error_item():
    result = parse("reference k(A, 1):\n    return A\n")
    assert found(result) == [("AR001", 0, 15)]
    assert isinstance(result.module.items[0], ast.ErrorItem)


def test_checking_a_reference_body_emits_no_python_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = parse("reference k(A):\n    return 1if A else 2\n")
    assert result.diagnostics == []
    assert [str(w.message) for w in caught] == []


def test_reference_continuation_line_indented_less_than_the_body_is_valid_python():
    result = parse("reference k(A):\n    return torch.cat([A,\n  A])\n")
    assert result.diagnostics == []


def test_syntax_diagnostics_are_errors_from_argus():
    result = parse("kernel k():\n    x = = 1\n")
    (diagnostic,) = result.diagnostics
    assert (diagnostic.severity.value, diagnostic.source) == ("error", "argus")


# ---- recovery: what survives -----------------------------------------------------------------------------

MANY_ERRORS = """\
kernel k(A: f16[M], B: 3, C: out f16[M]):
    x = = 1
    y = f(1, 2
    z = 1)
    w = 'abc
    v = 1 ? 2
    s = 1
      u = 3
    t = 4
junk here
reference k(A):
    return A +
kernel j(B: f16[M]):
    q = 1
"""


def test_every_error_in_a_file_is_reported_once_with_its_code_and_position():
    assert found(parse(MANY_ERRORS)) == [
        ("AR001", 0, 23),  # parameter B has a number for a dtype
        ("AR001", 1, 8),  # = =
        ("AR002", 4, 8),  # unterminated string
        ("AR002", 5, 10),  # ?
        ("AR003", 2, 9),  # ( never closed
        ("AR004", 3, 9),  # ) without (
        ("AR005", 7, 0),  # unexpected indent
        ("AR006", 9, 0),  # junk at the top level
        ("AR007", 11, 13),  # Python syntax error at the end of the line: its last character
    ]


def test_a_file_with_many_errors_keeps_every_item_and_every_good_statement():
    module = parse(MANY_ERRORS).module
    kernel, junk, reference, second = module.items
    assert [p.name for p in kernel.params] == ["A", "C"]
    kinds = [type(s).__name__ for s in kernel.body]
    assert kinds == ["ErrorStmt"] * 5 + ["Assign"] * 3
    assert [s.targets[0].id for s in kernel.body[5:]] == ["s", "u", "t"]
    assert isinstance(junk, ast.ErrorItem)
    assert isinstance(reference, ast.PythonBlock)
    assert second.name == "j"
    assert sx(second.body[0].value) == "1"


def test_broken_statement_becomes_an_error_stmt_and_the_following_ones_parse():
    result = parse("kernel k():\n    x = 1 +\n    y = 2\n    z = = 3\n    w = 4\n")
    body = result.module.items[0].body
    assert [type(s) for s in body] == [ast.ErrorStmt, ast.Assign, ast.ErrorStmt, ast.Assign]
    assert [s.targets[0].id for s in body if isinstance(s, ast.Assign)] == ["y", "w"]
    assert [c for c, _, _ in found(result)] == ["AR001", "AR001"]


def test_error_stmt_spans_the_text_it_replaces():
    body = parse("kernel k():\n    x = = 1\n    y = f(1,\n          2 +)\n").module.items[0].body
    assert [span(s) for s in body] == [(1, 4, 1, 11), (2, 4, 3, 14)]


def test_error_stmt_span_leaves_out_a_trailing_comment():
    (stmt,) = parse("kernel k():\n    x = = 1   # comment\n").module.items[0].body
    assert span(stmt) == (1, 4, 1, 11)


def test_error_stmt_records_the_names_it_seems_to_assign():
    body = parse("kernel k():\n    a, b = = 1\n    for i in = 3:\n        pass\n").module.items[0].body
    assert [s.names for s in body] == [["a", "b"], ["i"]]


def test_broken_block_header_keeps_its_body_inside_the_error_stmt():
    result = parse("kernel k():\n    for i range(3):\n        x = 1\n        z = = 2\n    y = 2\n")
    header, after = result.module.items[0].body
    assert isinstance(header, ast.ErrorStmt)
    assert [type(s) for s in header.body] == [ast.Assign, ast.ErrorStmt]
    assert isinstance(after, ast.Assign)
    assert found(result) == [("AR001", 1, 10), ("AR001", 3, 12)]


def test_header_missing_its_colon_is_read_with_it():
    result = parse("kernel k():\n    if x\n        x = 1\n    y = 2\n")
    header, after = result.module.items[0].body
    assert isinstance(header, ast.If)
    assert [type(s) for s in header.body] == [ast.Assign]
    assert isinstance(after, ast.Assign)
    assert [(c, line) for c, line, _ in found(result)] == [("AR001", 1)]
    assert [d.message for d in result.diagnostics] == ["expected ':' after the `if` header"]


def test_error_inside_a_nested_block_keeps_the_blocks_around_it():
    text = "kernel k():\n    for i in range(3):\n        if i > 1:\n            x = 1 +\n        y = 2\n    z = 3\n"
    body = parse(text).module.items[0].body
    loop, after = body
    branch, inner = loop.body
    assert [type(s) for s in branch.body] == [ast.ErrorStmt]
    assert isinstance(inner, ast.Assign)
    assert isinstance(after, ast.Assign)


def test_errors_in_both_branches_of_an_if_keep_the_if():
    text = "kernel k():\n    if a:\n        y = = 2\n        z = 3\n    else:\n        w = )\n    v = 4\n"
    result = parse(text)
    branch, after = result.module.items[0].body
    assert isinstance(branch, ast.If)
    assert [type(s) for s in branch.body] == [ast.ErrorStmt, ast.Assign]
    assert [type(s) for s in branch.orelse] == [ast.ErrorStmt]
    assert isinstance(after, ast.Assign)
    assert found(result) == [("AR001", 2, 12), ("AR004", 5, 12)]


def test_bad_kernel_parameter_leaves_the_others():
    result = parse("kernel k(A: f16[M], B: 3, C: out f32[N]):\n    y = 2\n")
    kernel = result.module.items[0]
    assert [p.name for p in kernel.params] == ["A", "C"]
    assert span(kernel.params[1]) == (0, 26, 0, 39)
    assert [type(s) for s in kernel.body] == [ast.Assign]
    assert found(result) == [("AR001", 0, 23)]


def test_parameter_missing_its_colon_leaves_the_others():
    result = parse("kernel k(A: f16[M], B f16[N], C: f32[N]):\n    y = 2\n")
    assert [p.name for p in result.module.items[0].params] == ["A", "C"]
    assert found(result) == [("AR001", 0, 22)]


def test_two_bad_parameters_are_both_reported():
    result = parse("kernel k(A: f16[M], B: 3, C: f32[N], D: f16[=]):\n    pass\n")
    assert [p.name for p in result.module.items[0].params] == ["A", "C"]
    assert found(result) == [("AR001", 0, 23), ("AR001", 0, 44)]


def test_bad_parameter_on_a_continuation_line_leaves_the_others():
    result = parse("kernel k(A: f16[M],\n         B: f16[N] = = 1,\n         C: f32[N]):\n    pass\n")
    assert [p.name for p in result.module.items[0].params] == ["A", "C"]
    assert [(c, line) for c, line, _ in found(result)] == [("AR001", 1)]


def test_kernel_header_missing_its_colon_still_parses_the_body():
    result = parse("kernel k(A: f16[M])\n    x = 1\n")
    kernel = result.module.items[0]
    assert isinstance(kernel, ast.Kernel)
    assert [type(s) for s in kernel.body] == [ast.Assign]
    # "expected ':'" at the end of the line underlines its last character, inside the text
    assert [(c, line, col) for c, line, col in found(result)] == [("AR001", 0, 18)]


def test_broken_kernel_header_does_not_hide_the_next_kernel():
    result = parse("kernel k(A: f16[M]:\n    y = 2\nkernel j(B: f16[M]):\n    z = 1\n")
    broken, good = result.module.items
    assert isinstance(good, ast.Kernel)
    assert good.name == "j"
    assert [type(s) for s in good.body] == [ast.Assign]
    assert found(result) == [("AR003", 0, 8)]
    assert span(broken) == (0, 0, 1, 9)


def test_unclosed_bracket_in_a_body_does_not_swallow_the_next_kernel():
    result = parse("kernel k():\n    x = [1, 2\n    y = 3\nkernel j():\n    pass\n")
    first, second = result.module.items
    assert [type(s) for s in first.body] == [ast.ErrorStmt, ast.Assign]
    assert second.name == "j"
    assert found(result) == [("AR003", 1, 8)]


def test_broken_statement_does_not_affect_the_next_kernel():
    result = parse("kernel k():\n    y = = 2\nkernel j():\n    z = 1\n")
    first, second = result.module.items
    assert [type(s) for s in first.body] == [ast.ErrorStmt]
    assert [type(s) for s in second.body] == [ast.Assign]


def test_bad_size_set_leaves_the_other_sets():
    result = parse("sizes k:\n    small: M = 1, N = 2\n    bad M = 3\n    big: M = 4,\n")
    (sizes,) = result.module.items
    assert [s.name for s in sizes.sets] == ["small", "big"]
    assert found(result) == [("AR001", 2, 8)]


def test_reference_error_does_not_hide_the_next_item():
    result = parse("reference k(A):\n    return A +\nsizes k:\n    s: M = 1\n")
    reference, sizes = result.module.items
    assert isinstance(reference, ast.PythonBlock)
    assert [s.name for s in sizes.sets] == ["s"]


@pytest.mark.parametrize(
    "text",
    ["kernel k():\n    x = 007\n    y = 1\n", "kernel k():\n    x = 0x_\n", "sizes k:\n    s: M = 096\n"],
    ids=["leading-zero", "empty-hex", "leading-zero-in-sizes"],
)
def test_malformed_integer_is_a_diagnostic_not_an_internal_error(text):
    result = parse(text)
    assert not any("internal" in d.message for d in result.diagnostics)
    assert not isinstance(result.module.items[0], ast.ErrorItem)


def test_dedent_to_an_unknown_column_is_ar005_and_keeps_the_kernel():
    result = parse("kernel k():\n    x = 1\n  y = 2\n    z = 3\n")
    assert [c for c, _, _ in found(result)] == ["AR005"]
    assert isinstance(result.module.items[0], ast.Kernel)


def test_block_header_without_a_body_keeps_the_kernel():
    result = parse("kernel k():\n    x = 1\n    if x:\n    y = 2\n")
    kernel = result.module.items[0]
    assert isinstance(kernel, ast.Kernel)
    assert [s.targets[0].id for s in kernel.body if isinstance(s, ast.Assign)] == ["x", "y"]
    assert len(result.diagnostics) == 1


def test_bracket_continuation_may_be_indented_less_than_its_statement():
    kernel = only_kernel("kernel k():\n    x = f(1,\n  2)\n    y = 3\n")
    assert [s.targets[0].id for s in kernel.body] == ["x", "y"]


@pytest.mark.parametrize(
    "text",
    ["kernel k():\n", "kernel k():\n    x = 1\n  y = 2\n    z = 3\n", "kernel k():\n    * = 1\n"],
    ids=["header-only", "bad-dedent", "bad-statement-start"],
)
def test_messages_never_name_raw_grammar_terminals(text):
    messages = " ".join(d.message for d in parse(text).diagnostics)
    assert "_INDENT" not in messages
    assert "$END" not in messages
    assert "'$'" not in messages


def test_kernel_span_covers_a_broken_last_statement():
    kernel = parse("kernel k():\n    x = = 1\n").module.items[0]
    assert span(kernel.body[0]) == (1, 4, 1, 11)
    assert span(kernel) == (0, 0, 1, 11)


def test_kernel_without_a_name_has_no_span_past_its_line():
    result = parse("kernel \n    x = 1\n")
    kernel = result.module.items[0]
    assert [c for c, _, _ in found(result)] == ["AR001"]
    assert kernel.name_span.end_col <= len("kernel ")


def test_error_stmt_span_in_a_tab_indented_body_starts_after_the_tab():
    (stmt, _) = parse("kernel k():\n\tx = = 1\n\ty = 2\n").module.items[0].body
    assert span(stmt) == (1, 1, 1, 8)


def test_sizes_span_in_a_tab_indented_block_stays_on_its_line():
    result = parse("sizes k:\n\ts: M = 1\n\tt M = 2\n")
    assert span(result.module.items[0]) == (0, 0, 2, 8)


def test_sizes_span_covers_a_broken_last_set():
    result = parse("sizes k:\n    s: M = 1\n    t:\n")
    assert span(result.module.items[0]) == (0, 0, 2, 6)


@pytest.mark.parametrize("source", ["a + not b", "a == not b", "-not a"])
def test_not_inside_a_tighter_operator_needs_parentheses(source):
    result = parse(f"kernel k():\n    q = {source}\n")
    assert [(d.code, d.message) for d in result.diagnostics] == [("AR001", "`not` needs parentheses here: (not ...)")]


@pytest.mark.parametrize("source", ["not a == b", "a and not b", "not -a", "a + (not b)"])
def test_not_where_python_allows_it_is_accepted(source):
    assert parse(f"kernel k():\n    q = {source}\n").diagnostics == []

"""Operator precedence, shared by the tree builder and by unparse."""

# Python's precedence, loosest first. Prefix operators bind as in Python: `not` below comparisons,
# unary minus above `*` but below `**` (so -x**2 is -(x**2)).
BINARY_PRECEDENCE = {
    "or": 1,
    "and": 2,
    **dict.fromkeys(("<", "<=", ">", ">=", "==", "!="), 4),
    "|": 5,
    "^": 6,
    "&": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "//": 10,
    "%": 10,
    "**": 12,
}
PREFIX_BINDING = {"not": 4, "-": 11, "+": 11, "~": 11}

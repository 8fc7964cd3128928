"""shipped/written.py: a statement's text as ast.unparse writes it, for every candidate the repair
search makes of both corpora's functions, and for random statements of every kind of node it
writes, brackets, shared nodes and the nodes it leaves to ast.unparse included."""
import ast
import glob
import os
import random
import sys
import textwrap

import pytest
from helpers import REPO

from assignments.grading.shipped import repair, written
from assignments.grading.shipped.written import unparse

pytestmark = pytest.mark.skipif(sys.version_info[:2] not in written.Written.CHECKED,
                                reason="written.py hands every statement to ast.unparse on this Python")


def _statements():
    """Every statement of the corpora's functions (learners' and slips', right and wrong)."""
    for path in sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "learners", "*", "*.py"))
                       + glob.glob(os.path.join(REPO, "tests", "fixtures", "slips", "*", "*.py"))):
        with open(path, encoding="utf-8") as f:
            try:
                tree = ast.parse(textwrap.dedent(f.read()))
            except SyntaxError:
                continue
        for fdef in (d for d in ast.walk(tree) if isinstance(d, ast.FunctionDef)):
            yield fdef, repair._statements(fdef)


@pytest.mark.slow
def test_every_candidate_of_the_corpora_is_written_as_ast_unparse_writes_it():
    """The edits repair.py makes (a node replaced, names exchanged, an index, an operator, a term
    or a factor added) of every statement in both corpora: the same text, one by one."""
    count = 0
    for fdef, statements in _statements():
        context = repair.Context(repair._names(fdef), {}, list(repair.NUMPY_ACTIVATIONS))
        for stmt in statements:
            assert unparse(stmt) == ast.unparse(stmt)
            for terms in (((), ()), repair._terms(stmt, {})):
                for edited in repair.edits(stmt, context, terms):
                    if isinstance(edited, ast.For):
                        continue   # a loop's first line is written by repair._header
                    assert unparse(edited) == ast.unparse(edited), ast.dump(edited)
                    count += 1
    assert count > 50_000, count


LEAVES = [lambda r: ast.Name(r.choice(["a", "da_next", "np", "parameters", "t"])),
          lambda r: ast.Constant(r.choice([0, 1, 2, -1, 0.5, 1e-8, "Wax", "it's", 'say "x"', "a\\b", True, None, 3.0])),
          lambda r: ast.Constant(r.choice([(1, 2), ..., b"x", 1j, 1e300 * 10, float("nan")])),   # left to ast.unparse
          lambda r: ast.Constant("u", kind="u")]
OPERATORS = [ast.Add, ast.Sub, ast.Mult, ast.MatMult, ast.Div, ast.Mod, ast.Pow, ast.FloorDiv, ast.LShift, ast.RShift,
             ast.BitOr, ast.BitXor, ast.BitAnd]
COMPARISONS = [ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn]


def _expression(r, depth, made):
    """A random expression; a node made before comes back now and then (a tree may share nodes,
    as an edit's copy shares the statement's untouched ones)."""
    if made and r.random() < 0.08:
        return r.choice(made)
    if depth <= 0 or r.random() < 0.25:
        node = r.choice(LEAVES[:2] * 100 + LEAVES[2:])(r)
    else:
        e = lambda: _expression(r, depth - 1, made)   # noqa: E731
        kind = r.randrange(15) if r.random() < 0.01 else r.randrange(12)
        node = [lambda: ast.BinOp(e(), r.choice(OPERATORS)(), e()),
                lambda: ast.UnaryOp(r.choice([ast.USub, ast.UAdd, ast.Invert, ast.Not])(), e()),
                lambda: ast.Call(e(), [e() for _ in range(r.randrange(3))],
                                 [ast.keyword(r.choice(["axis", None]), e()) for _ in range(r.randrange(2))]),
                lambda: ast.Attribute(e(), r.choice(["T", "shape", "real"])),
                lambda: ast.Subscript(e(), r.choice([e(), ast.Tuple([e() for _ in range(r.randrange(4))]),
                                                     ast.Slice(r.choice([None, e()]), r.choice([None, e()]),
                                                               r.choice([None, e()]))])),
                lambda: ast.Tuple([e() for _ in range(r.randrange(4))]),
                lambda: ast.List([e() for _ in range(r.randrange(3))]),
                lambda: ast.Compare(e(), [r.choice(COMPARISONS)() for _ in range(2)], [e(), e()]),
                lambda: ast.BoolOp(r.choice([ast.And, ast.Or])(), [e() for _ in range(2 + r.randrange(2))]),
                lambda: ast.IfExp(e(), e(), e()),
                lambda: ast.Starred(e()),
                lambda: ast.Call(ast.Name("f"), [ast.Starred(e())], []),
                lambda: ast.Lambda(ast.arguments([], [], None, [], [], None, []), e()),   # left to ast.unparse
                lambda: ast.Dict([e()], [e()]),                                          # left to ast.unparse
                lambda: ast.JoinedStr([ast.Constant("x")])][kind]()                     # left to ast.unparse
    made.append(node)
    return node


def _statement(r):
    made = []
    e = lambda: _expression(r, 4, made)   # noqa: E731
    node = r.choice([lambda: ast.Assign([e() for _ in range(1 + r.randrange(2))], e()),
                     lambda: ast.AugAssign(e(), r.choice(OPERATORS)(), e()),
                     lambda: ast.Return(r.choice([None, e()])),
                     lambda: ast.Expr(e()),
                     lambda: ast.Assign([ast.Name("x")], e(), type_comment="int"),   # left to ast.unparse
                     lambda: ast.Pass()] if r.random() < 0.02 else [lambda: ast.Assign([e()], e()),
                                                                  lambda: ast.AugAssign(e(), r.choice(OPERATORS)(), e()),
                                                                  lambda: ast.Expr(e()), lambda: ast.Return(e())])()
    return ast.fix_missing_locations(ast.copy_location(node, ast.Name("x", lineno=1, col_offset=0)))


def test_random_statements_are_written_as_ast_unparse_writes_them():
    """Random statements of every node kind written here, nested in each other (so that every
    bracket rule meets every other), with shared nodes and nodes left to ast.unparse."""
    r = random.Random(0)
    fast = 0
    for _ in range(4_000):
        stmt = _statement(r)
        assert unparse(stmt) == ast.unparse(stmt), ast.dump(stmt)
        try:
            written.Written._statement(stmt, [], {})
            fast += 1
        except written.Written._Other:
            pass
    assert 1_000 < fast < 4_000, fast   # most written here, some left to ast.unparse


def test_a_statement_without_a_place_is_refused_as_ast_unparse_refuses_it():
    stmt = ast.Assign([ast.Name("x")], ast.Constant(1))   # no lineno: ast.unparse cannot read its type comment
    with pytest.raises(AttributeError):
        ast.unparse(stmt)
    with pytest.raises(AttributeError):
        unparse(stmt)


def test_a_bracket_rule_broken_is_caught(monkeypatch):
    """The tests above fail when a rule is off: here, a subtraction bound as tightly as a product."""
    monkeypatch.setitem(written.Written._BINARY_PRECEDENCE, "-", written.Written.P.TERM)
    r = random.Random(0)
    assert any(unparse(s) != ast.unparse(s) for s in (_statement(r) for _ in range(2000)))

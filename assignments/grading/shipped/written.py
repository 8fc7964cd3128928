"""A statement's text as ``ast.unparse`` writes it, written faster for the few kinds of node a
learner's function and the repair search's edits are made of.

The repair search writes every candidate it makes (repair.py: hundreds a function, to tell one
from another and to compile it), and ``ast.unparse`` spent about a fifth of a search doing
so: a visitor class, a context manager for every bracket. ``unparse`` here writes the same text
with one function per kind of node, and the same rule for brackets: each node is written at
the precedence its parent last gave it, and a node no parent gave one is written as a whole
expression (``ast._Unparser``'s ``set_precedence`` and ``get_precedence``, a node met twice
included). Any other kind of node, constant or statement, and any Python whose ``ast`` this
was not checked against (``Written.CHECKED``), goes to ``ast.unparse`` itself.
Rule (shipped/): the standard library and numpy only; it leaves the grading process as text.
"""
import ast
import sys


def unparse(node):
    """``ast.unparse(node)``."""
    if Written.P is None or sys.version_info[:2] not in Written.CHECKED:
        return ast.unparse(node)
    try:
        out = []
        Written._statement(node, out, {})
        return "".join(out)
    except Written._Other:
        return ast.unparse(node)


class Written:
    """The writers, one per kind of node (a namespace: in the kernel this text shares one with the
    students' checks, repair.py and the harness)."""

    CHECKED = ((3, 11),)
    """The Pythons whose ``ast.unparse`` the text is checked against (tests/test_written.py): on any
    other, ``ast.unparse`` writes every statement."""

    P = getattr(ast, "_Precedence", None)

    class _Other(Exception):
        """A node this module does not write: ``ast.unparse`` writes the statement."""

    @staticmethod
    def _statement(node, out, given):
        kind = type(node)
        if getattr(node, "type_comment", None) is not None or not hasattr(node, "lineno"):
            raise Written._Other   # ast.unparse writes the comment, or says why it cannot
        if kind is ast.Assign:
            for target in node.targets:
                given[target] = Written.P.TUPLE
                Written._expression(target, out, given)
                out.append(" = ")
            Written._expression(node.value, out, given)
        elif kind is ast.AugAssign:
            Written._expression(node.target, out, given)
            out.append(" " + Written._BINARY[type(node.op)] + "= ")
            Written._expression(node.value, out, given)
        elif kind is ast.Return:
            out.append("return")
            if node.value:
                out.append(" ")
                Written._expression(node.value, out, given)
        elif kind is ast.Expr:
            given[node.value] = Written.P.YIELD
            Written._expression(node.value, out, given)
        else:
            raise Written._Other

    @staticmethod
    def _expression(node, out, given):
        write = Written._WRITERS.get(type(node))
        if write is None:
            raise Written._Other
        write(node, out, given)

    @staticmethod
    def _bracketed(node, given, precedence):
        """Whether ``node``, of ``precedence``, is written in brackets where its parent put it."""
        return given.get(node, Written.P.TEST) > precedence

    @staticmethod
    def _name(node, out, given):
        out.append(node.id)

    @staticmethod
    def _constant(node, out, given):
        value, kind = node.value, type(node.value)
        if node.kind is not None or kind not in (int, float, str, bool, type(None)):
            raise Written._Other   # u"", tuples, ..., bytes, complex
        text = repr(value)
        if kind is float and ("inf" in text or "nan" in text):
            raise Written._Other
        out.append(text)

    @staticmethod
    def _attribute(node, out, given):
        given[node.value] = Written.P.ATOM
        Written._expression(node.value, out, given)
        if type(node.value) is ast.Constant and isinstance(node.value.value, int):
            out.append(" ")
        out.append("." + node.attr)

    @staticmethod
    def _call(node, out, given):
        given[node.func] = Written.P.ATOM
        Written._expression(node.func, out, given)
        out.append("(")
        comma = False
        for e in node.args:
            if comma:
                out.append(", ")
            comma = True
            Written._expression(e, out, given)
        for e in node.keywords:
            if comma:
                out.append(", ")
            comma = True
            out.append("**" if e.arg is None else e.arg + "=")
            Written._expression(e.value, out, given)
        out.append(")")

    @staticmethod
    def _items(elts, out, given):
        if len(elts) == 1:
            Written._expression(elts[0], out, given)
            out.append(",")
            return
        for i, e in enumerate(elts):
            if i:
                out.append(", ")
            Written._expression(e, out, given)

    @staticmethod
    def _subscript(node, out, given):
        given[node.value] = Written.P.ATOM
        Written._expression(node.value, out, given)
        out.append("[")
        if type(node.slice) is ast.Tuple and node.slice.elts:
            Written._items(node.slice.elts, out, given)
        else:
            Written._expression(node.slice, out, given)
        out.append("]")

    @staticmethod
    def _slice(node, out, given):
        if node.lower:
            Written._expression(node.lower, out, given)
        out.append(":")
        if node.upper:
            Written._expression(node.upper, out, given)
        if node.step:
            out.append(":")
            Written._expression(node.step, out, given)

    @staticmethod
    def _tuple(node, out, given):
        bracketed = not node.elts or Written._bracketed(node, given, Written.P.TUPLE)
        out.append("(" if bracketed else "")
        Written._items(node.elts, out, given)
        out.append(")" if bracketed else "")

    @staticmethod
    def _list(node, out, given):
        out.append("[")
        for i, e in enumerate(node.elts):
            if i:
                out.append(", ")
            Written._expression(e, out, given)
        out.append("]")

    @staticmethod
    def _binary(node, out, given):
        operator = Written._BINARY[type(node.op)]
        precedence = Written._BINARY_PRECEDENCE[operator]
        bracketed = Written._bracketed(node, given, precedence)
        out.append("(" if bracketed else "")
        if operator == "**":
            left, right = precedence.next(), precedence
        else:
            left, right = precedence, precedence.next()
        given[node.left] = left
        Written._expression(node.left, out, given)
        out.append(f" {operator} ")
        given[node.right] = right
        Written._expression(node.right, out, given)
        out.append(")" if bracketed else "")

    @staticmethod
    def _unary(node, out, given):
        operator = Written._UNARY[type(node.op)]
        precedence = Written.P.NOT if operator == "not" else Written.P.FACTOR
        bracketed = Written._bracketed(node, given, precedence)
        out.append("(" if bracketed else "")
        out.append(operator if precedence is Written.P.FACTOR else operator + " ")
        given[node.operand] = precedence
        Written._expression(node.operand, out, given)
        out.append(")" if bracketed else "")

    @staticmethod
    def _compare(node, out, given):
        bracketed = Written._bracketed(node, given, Written.P.CMP)
        out.append("(" if bracketed else "")
        for part in (node.left, *node.comparators):
            given[part] = Written.P.CMP.next()
        Written._expression(node.left, out, given)
        for op, e in zip(node.ops, node.comparators):
            out.append(" " + Written._COMPARE[type(op)] + " ")
            Written._expression(e, out, given)
        out.append(")" if bracketed else "")

    @staticmethod
    def _boolean(node, out, given):
        operator = "and" if type(node.op) is ast.And else "or"
        precedence = Written.P.AND if operator == "and" else Written.P.OR
        bracketed = Written._bracketed(node, given, precedence)
        out.append("(" if bracketed else "")
        for i, value in enumerate(node.values):
            if i:
                out.append(f" {operator} ")
            precedence = precedence.next()
            given[value] = precedence
            Written._expression(value, out, given)
        out.append(")" if bracketed else "")

    @staticmethod
    def _if_expression(node, out, given):
        bracketed = Written._bracketed(node, given, Written.P.TEST)
        out.append("(" if bracketed else "")
        given[node.body] = given[node.test] = Written.P.TEST.next()
        Written._expression(node.body, out, given)
        out.append(" if ")
        Written._expression(node.test, out, given)
        out.append(" else ")
        given[node.orelse] = Written.P.TEST
        Written._expression(node.orelse, out, given)
        out.append(")" if bracketed else "")

    @staticmethod
    def _starred(node, out, given):
        out.append("*")
        given[node.value] = Written.P.EXPR
        Written._expression(node.value, out, given)

    # the writers by kind of node (callable as they are: a staticmethod is, from Python 3.10), and the
    # operators' words and precedences, as ast._Unparser has them
    _WRITERS = {
        ast.Name: _name, ast.Constant: _constant, ast.Attribute: _attribute, ast.Call: _call,
        ast.Subscript: _subscript, ast.Slice: _slice, ast.Tuple: _tuple, ast.List: _list,
        ast.BinOp: _binary, ast.UnaryOp: _unary, ast.Compare: _compare, ast.BoolOp: _boolean,
        ast.IfExp: _if_expression, ast.Starred: _starred}
    _BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/", ast.Mod: "%", ast.LShift: "<<",
               ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&", ast.FloorDiv: "//", ast.Pow: "**"}
    _BINARY_PRECEDENCE = {} if P is None else {
        "+": P.ARITH, "-": P.ARITH, "*": P.TERM, "@": P.TERM, "/": P.TERM, "%": P.TERM, "<<": P.SHIFT, ">>": P.SHIFT,
        "|": P.BOR, "^": P.BXOR, "&": P.BAND, "//": P.TERM, "**": P.POWER}
    _UNARY = {ast.Invert: "~", ast.Not: "not", ast.UAdd: "+", ast.USub: "-"}
    _COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is",
                ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}

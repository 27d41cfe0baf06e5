"""The source of a lambda: its own node, out of the line (or the file) that holds it.

A line may hold several lambdas, and a lambda may span the lines of a bracket: the lambda is
found among those of its whole file that start on its code's first line and take its
parameters, told apart by the columns its code records (Python 3.11+), then by the code each
compiles to (``source_text.code_shape``).
"""

from __future__ import annotations

import ast
import functools
import linecache

import gast

from mindgrad.compiler.front import depth
from mindgrad.compiler.front.source_text import (
    code_parameters,
    code_shape,
    compiled_code,
    parameter_names,
    shift_lines,
)
from mindgrad.errors import NoSourceError


def lambda_tree(fn, source, lines, first_line):
    """The lambda's own node, out of the (possibly multi-lambda) source line inspect returns.
    Where the line alone does not tell (several lambdas of the same parameters, a lambda on a
    continuation line), the columns Python 3.11+ records for the lambda's code pin it."""
    # the whole statement around it, in the file: a lambda spanning lines of a bracket
    # ({"k": lambda x: a(x)\n + b(x)}) is cut short on its own line, where it may even parse
    found = _lambda_in_file(fn, first_line)
    if found is not None:
        return _lambda_def(found)
    text = source.strip()
    module = None
    for candidate in (text, text.rstrip(",;)"), "(" + text + ")", text.split("=", 1)[-1].strip()):
        try:
            module = depth.parse(candidate)
            break
        except SyntaxError:
            continue
    lambdas = [n for n in gast.walk(module) if isinstance(n, gast.Lambda)] if module else []
    lambdas = [n for n in lambdas if parameter_names(n.args) == code_parameters(fn.__code__)] \
        or lambdas
    if len(lambdas) != 1:
        lam = _lambda_at_columns(fn, lines, first_line)
        if lam is not None:
            lambdas = [lam]
    if module is None and not lambdas:
        raise NoSourceError(f"cannot parse the source line of a lambda: {text!r}")
    if len(lambdas) != 1:
        raise NoSourceError(
            f"cannot tell which of the {len(lambdas)} lambdas on this line to differentiate: "
            f"{text!r}; give it a name with def (Python 3.11 and later tell lambdas apart by "
            "their columns)")
    return _lambda_def(lambdas[0])


def _lambda_def(lam):
    """``def lambda_(<lam's parameters>): return <lam's body>``, where ``lam`` stands."""
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam)
    fdef = gast.FunctionDef(name="lambda_", args=lam.args, body=[ret], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])
    gast.copy_location(fdef, lam)
    return fdef


def _lambda_in_file(fn, first_line):
    """The lambda of ``fn``'s code, found in the whole text of its file among the lambdas
    that start on its first line with its parameters: by the columns its code records
    (Python 3.11+), then by the code each compiles to. Line numbers count from
    ``first_line``. None where the file does not parse; ``NoSourceError`` where several
    lambdas compile to the same code there."""
    code = fn.__code__
    try:
        found = _lambdas_by_line("".join(linecache.getlines(code.co_filename)))
        found = [gast.ast_to_gast(n) for n in found.get(code.co_firstlineno, ())]
    except (SyntaxError, ValueError, RecursionError):
        return None
    found = [n for n in found if parameter_names(n.args) == code_parameters(code)]
    positions = _positions(code)
    if len(found) > 1 and positions:
        start = min((p[0], p[2]) for p in positions)
        end = max((p[1], p[3]) for p in positions)
        found = [n for n in found if (n.body.lineno, n.body.col_offset) <= start and
                 end <= (n.body.end_lineno, n.body.end_col_offset)] or found
    if len(found) > 1:
        shape = code_shape(code)
        same = [n for n in found if (lambda c: c is not None and code_shape(c) == shape)(
            compiled_code(fn, _lambda_def(n), None))]
        # lambdas that compile to fn's very code are the same function: any of them is read
        found = same[:1] or found
    if len(found) > 1:
        raise NoSourceError(
            f"cannot tell which of the {len(found)} lambdas at {code.co_filename}:"
            f"{code.co_firstlineno} to differentiate: neither their columns nor the code they "
            "compile to tell them apart; give it a name with def")
    if not found:
        return None
    lam = found[0]
    shift_lines(lam, 1 - first_line)
    return lam


@functools.lru_cache(maxsize=8)
def _lambdas_by_line(text):
    """The lambdas of a file's ``text`` (``ast`` nodes, never changed: each use converts its
    own), by the line each starts on: parsed once per text, as its lambdas are read."""
    found = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Lambda):
            found.setdefault(node.lineno, []).append(node)
    return found


def _positions(code):
    """The (line, end line, column, end column) spans that ``code``'s instructions record
    (Python 3.11+; none before)."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return []
    return [p for p in positions() if None not in p and (p[0], p[2]) != (p[1], p[3])]


def _lambda_at_columns(fn, lines, first_line):
    """The lambda whose body spans the columns its code's instructions record (Python 3.11+),
    read from ``lines`` (which start at ``first_line``), or None. Line numbers of the nodes
    count from ``first_line``."""
    spans = _positions(fn.__code__)
    if not spans:
        return None
    (l0, c0), (l1, c1) = min((p[0], p[2]) for p in spans), max((p[1], p[3]) for p in spans)
    if not first_line <= l0 <= l1 < first_line + len(lines):
        return None


    def line(n):
        return lines[n - first_line].encode()  # columns count UTF-8 bytes


    if l0 == l1:
        body = line(l0)[c0:c1].decode()
    else:
        body = "\n".join([line(l0)[c0:].decode().rstrip("\n")] +
                         [line(n).decode().rstrip("\n") for n in range(l0 + 1, l1)] +
                         [line(l1)[:c1].decode()])
    head = "".join(line(n).decode() for n in range(first_line, l0)) + line(l0)[:c0].decode()
    start = max((i for i in range(len(head)) if head.startswith("lambda", i) and
                 (i == 0 or not (head[i - 1].isalnum() or head[i - 1] == "_"))), default=None)
    if start is None:
        return None
    header = head[start:].rstrip().rstrip("(").rstrip()
    try:
        lam = depth.parse("(" + header + " None)").body[0].value
        expr = depth.parse("(" + body + "\n)").body[0].value
    except SyntaxError:
        return None
    if not isinstance(lam, gast.Lambda) or \
            parameter_names(lam.args) != code_parameters(fn.__code__):
        return None
    shift_lines(expr, l0 - first_line)
    lam.body = expr
    for node in gast.walk(lam.args):
        if getattr(node, "lineno", None) is not None:
            node.lineno = 1
    lam.lineno = 1
    return lam

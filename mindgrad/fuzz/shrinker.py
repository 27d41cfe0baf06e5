"""Shrinks a failing program to a small one that fails the same way (delta debugging).

Steps, tried greedily (after a success, from the step that succeeded) until none applies:
delete a statement (a body left empty gets ``pass``), replace an expression by one of its
operands, drop an input's leading axis or make an axis 1. A step is kept when the smaller
program still fails with the same signature: same outcome, same exception type, raised at the
same place (a loop left running past the time limit is a crash of its own type, Timeout, so
it never counts as the failure sought).
"""

from __future__ import annotations

import ast
import dataclasses
import time

from mindgrad.fuzz import runner


def _statement_lists(tree):
    """Every list of statements in ``tree``: the module's and each block's."""
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _deletions(source):
    tree = ast.parse(source)
    count = sum(len(b) for b in _statement_lists(tree))
    for k in range(count):
        tree = ast.parse(source)
        seen = 0
        for block in _statement_lists(tree):
            if seen + len(block) > k:
                stmt = block[k - seen]
                if isinstance(stmt, (ast.Import, ast.ImportFrom)) or (
                        isinstance(stmt, ast.FunctionDef) and stmt.name == "f"):
                    break
                del block[k - seen]
                if not block:
                    block.append(ast.Pass())
                yield ast.unparse(tree)
                break
            seen += len(block)


class _Replace(ast.NodeTransformer):
    """Replaces the ``target``-th expression by its ``choice``-th operand."""

    def __init__(self, target, choice):
        self.target, self.choice, self.seen, self.done = target, choice, -1, False

    def generic_visit(self, node):
        if isinstance(node, ast.expr) and not self.done:
            self.seen += 1
            if self.seen == self.target:
                self.done = True
                operands = _operands(node)
                return operands[self.choice] if self.choice < len(operands) else node
        return super().generic_visit(node)


def _operands(node):
    """The sub-expressions that could stand for ``node``."""
    if isinstance(node, ast.Call):
        return [a for a in node.args if not isinstance(a, ast.Starred)]
    if isinstance(node, (ast.BinOp,)):
        return [node.left, node.right]
    if isinstance(node, (ast.UnaryOp,)):
        return [node.operand]
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id not in ("np", "math"):
        return [node.value]
    return []


def _replacements(source):
    tree = ast.parse(source)
    exprs = [n for n in ast.walk(tree) if isinstance(n, ast.expr)]
    for target in range(len(exprs)):
        for choice in range(2):
            new = _Replace(target, choice).visit(ast.parse(source))
            text = ast.unparse(new)
            if text != ast.unparse(ast.parse(source)):
                yield text


def _shapes(inputs):
    for i, shape in enumerate(inputs):
        if not shape:
            continue
        smaller = [shape[1:]] + [shape[:j] + (1,) + shape[j + 1:]
                                 for j, n in enumerate(shape) if n > 1]
        for s in smaller:
            yield inputs[:i] + [tuple(s)] + inputs[i + 1:]


def shrink(program, mode, directory, max_checks=400, max_seconds=120.0, timeout=10.0):
    """A smaller program failing like ``program`` in ``mode`` (``program`` if none); each
    check has ``timeout`` seconds (a deleted counter can leave a loop that never ends)."""
    want = runner.check(program, mode, directory, 3 * timeout).signature
    start = time.perf_counter()
    checks = 0
    best = dataclasses.replace(program, source=ast.unparse(ast.parse(program.source)) + "\n")

    def fails(candidate):
        nonlocal checks
        checks += 1
        return runner.check(candidate, mode, directory, timeout).signature == want

    position, clean_from_zero = 0, False
    while True:
        steps = _steps(best)
        found = None
        for k in range(position, len(steps)):
            if checks >= max_checks or time.perf_counter() - start > max_seconds:
                return best
            if fails(steps[k]):
                found = k
                break
        if found is not None:
            best, position, clean_from_zero = steps[found], found, False
        elif position == 0 or clean_from_zero:
            return best
        else:  # earlier steps failed on a larger program: try them once more
            position, clean_from_zero = 0, True


def _steps(program):
    """Every one-step reduction of ``program``: deletions first, then operands, then shapes."""
    steps = [dataclasses.replace(program, source=s + "\n") for s in _deletions(program.source)]
    steps += [dataclasses.replace(program, source=s + "\n")
              for s in _replacements(program.source)]
    steps += [dataclasses.replace(program, inputs=s) for s in _shapes(program.inputs)]
    return steps

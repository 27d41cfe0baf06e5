"""The transformations are writers over one classification (``operations.classify``), each
with an explicit context object: reverse mode's ``ReverseContext``, forward mode's
``ForwardContext``, both a ``FunctionContext``. These tests hold the shape: a writer has a
method for every kind of operation, and reads of its context only what the context sets."""

import ast
import inspect
import textwrap

import pytest

from mindgrad.compiler.transform import (
    context,
    forward,
    forward_context,
    forward_operations,
    operations,
    reverse,
    reverse_context,
    reverse_operations,
    reverse_statements,
)


def _defined(cls) -> set:
    """What an instance of ``cls`` has: its methods and properties, and every ``self.x``
    assigned in the ``__init__`` of it or a base."""
    names = {n for n in dir(cls) if not n.startswith("__")}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or not klass.__module__.startswith("mindgrad"):
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.value.id == "self" and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return names


def _reads_of_cx(module) -> set:
    """The attributes ``module``'s code reads of its context, ``cx.x`` or ``self.cx.x``."""
    reads = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id == "cx" or \
                isinstance(owner, ast.Attribute) and owner.attr == "cx":
            reads.add(node.attr)
    return reads


@pytest.mark.parametrize("modules, cls", [
    ((reverse, reverse_statements, reverse_operations), reverse_context.ReverseContext),
    ((forward, forward_operations), forward_context.ForwardContext),
])
def test_a_writer_reads_only_what_its_context_sets(modules, cls):
    defined = _defined(cls)
    for module in modules:
        reads = _reads_of_cx(module)
        assert reads, module.__name__
        assert reads <= defined, (module.__name__, sorted(reads - defined))


@pytest.mark.parametrize("cls", [context.FunctionContext, reverse_context.ReverseContext,
                                 forward_context.ForwardContext])
def test_a_context_reads_only_what_it_sets(cls):
    """No mixin: each ``self.x`` a context's methods read is set in an ``__init__`` of its
    class or a base, or is a method."""
    defined = _defined(cls)
    reads = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("mindgrad"):
            continue
        for node in ast.walk(ast.parse(inspect.getsource(klass))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.value.id == "self":
                reads.add(node.attr)
    assert reads <= defined, sorted(reads - defined)


def test_every_writer_has_a_method_for_every_kind_of_operation():
    kinds = {cls.kind for cls in operations.Operation.__subclasses__()}
    assert kinds == set(operations.OperationWriter.__abstractmethods__)
    for writer in (reverse_operations.AdjointWriter, forward_operations.TangentWriter):
        assert not writer.__abstractmethods__, writer
        assert kinds <= set(vars(writer)), (writer, kinds - set(vars(writer)))


def test_a_writer_lacking_a_kind_cannot_be_made():
    class Partial(operations.OperationWriter):
        def read(self, op, *args):
            return op

    with pytest.raises(TypeError, match="abstract"):
        Partial()


def test_write_dispatches_on_the_kind_of_the_record():
    calls = []

    class Recorder(operations.OperationWriter):
        pass

    for kind in operations.KINDS:
        setattr(Recorder, kind, lambda self, op, *args, kind=kind: calls.append((kind, args)))
    Recorder.__abstractmethods__ = frozenset()
    writer = Recorder()
    writer.write(operations.Read(value=None), "s", "name")
    writer.write(operations.ConstantCall(target=len), "t")
    assert calls == [("read", ("s", "name")), ("constant_call", ("t",))]

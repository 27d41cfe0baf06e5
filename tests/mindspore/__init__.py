"""mindgrad.mindspore: Cell, Parameter, nn, ops, GradOperation."""

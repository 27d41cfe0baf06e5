"""mindgrad.api: grad, value_and_grad, the functional transforms, the errors they raise."""

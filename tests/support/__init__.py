"""What the tests share: random inputs and the numerical check of rules."""

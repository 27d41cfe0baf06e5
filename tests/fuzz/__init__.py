"""The random-program tester: its batch and the programs it found."""

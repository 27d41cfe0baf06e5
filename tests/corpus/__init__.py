"""The corpus of user-style programs and their checks."""

"""mindgrad's tests, one folder per layer of the package (runtime, rules, compiler, api, mindspore),
the corpus of programs, the random-program tester, and support: helpers the tests share."""

"""mindgrad.compiler: the stages, the cache, the code they generate."""

"""The stages source, fence and normalize (``pipeline.PARSE``): a function's text read, what
cannot be differentiated refused, one operation per statement."""

"""The source-to-source transformation, one module per stage; ``pipeline.STAGES`` orders them."""

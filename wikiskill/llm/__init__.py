"""Model calls: the litellm client with its meter, budget, retries and response cache
(`client`, the only module that imports litellm), fitting a conversation into a context window,
the text tool-call protocol, JSON found in model text, and `doctor`'s probe of a model. It may
import `core`, `benchmarks`, `store` and `knowledge`."""

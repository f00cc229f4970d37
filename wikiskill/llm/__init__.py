"""Model calls. What roles use (`chat`: the ChatModel protocol and its Reply), the litellm model
behind it (`model`) with one logical call's request and retries (`call`), what a role's model is
and the tool protocol and response_format it settles on (`profile`), the meter and budget
(`meter`), the response cache (`cache`), the server's measured speed (`speed`), API keys
(`credentials`), litellm itself (`backend`, the only module that imports it), fitting a
conversation into a context window (`context`), the text tool-call protocol (`toolcalls`), JSON
found in model text (`jsontext`) and `doctor`'s probe of a model. It may import `core`,
`benchmarks`, `store` and `knowledge`. Its sections of wikiskill.yaml (`llm`, `budget`) are
`settings`, in core's layer."""

"""The protocols clients speak to nerve: chat completions, Messages, Responses, embeddings."""
